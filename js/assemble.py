#!/usr/bin/env python3
"""Lays out the npm package: assemble.py OUT_DIR STAMP FILE... copies each FILE
(the module, its JavaScript, declarations, package.json, README, LICENSE)
into OUT_DIR, replacing what an earlier build put there, and touches STAMP."""
import os
import shutil
import sys


def main():
    out_dir, stamp, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    for path in files:
        shutil.copyfile(path, os.path.join(out_dir, os.path.basename(path)))
    with open(stamp, 'w', encoding='utf-8') as f:
        f.write('\n'.join(os.path.basename(p) for p in files) + '\n')


if __name__ == '__main__':
    main()
