#!/usr/bin/env python3
"""Writes tools/cli/startup-order.txt: the symbols (functions and data) that
the static CLI touches while it starts and runs its common short commands, in
the order it first touches them. lld places them side by side at the start of
their output sections (meson.build: the start-up layout), so a process faults
in a few pages of code and data instead of one page every 64 KB of a 10 MB
binary.

The touches are recorded by running the CLI under Valgrind's lackey tool
(every instruction fetch, load and store), and mapped to symbols with nm.
Valgrind's virtual CPU picks glibc's string functions for its own features
(AVX2, not AVX-512, say), so for each one touched every variant of it is
listed: the layout then holds on whatever CPU runs the CLI.

usage: tools/startup-order.py [BUILD_DIR]      (default: build)
needs: valgrind, nm, strip (binutils); run after a code change that moves the
start-up path, then rebuild (the CLI relinks when the file changes).
"""
import bisect
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ORDER_FILE = os.path.join(HERE, 'cli', 'startup-order.txt')

# The commands whose start-up is laid out: detection of this machine (bare
# and named, alone (no parser), as JSON with options and as a table), the
# version probe, and the backend list. The first one's symbols come first.
COMMANDS = [
    ['detect'],
    [],
    ['detect', '--no-timings'],
    ['detect', '--table'],
    ['--version'],
    ['backends'],
]

# glibc's string and memory functions come in one variant per instruction set.
ISA_VARIANT = re.compile(r'^(__\w+?)_(sse2|ssse3|sse4_1|sse4_2|avx2|avx|evex|avx512\w*|erms)(_\w+)?$')


def symbols(binary):
    """(start, end, name) of every sized symbol, sorted by address."""
    out = subprocess.run(['nm', '-n', '-S', '--defined-only', binary],
                         check=True, capture_output=True, text=True).stdout
    spans = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        start, size, kind, name = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
        if size == 0 or kind in 'aAUwN':
            continue
        spans.append((start, start + size, name))
    spans.sort()
    return spans


def touched(binary, args, spans):
    """Symbols whose bytes `binary args` touches, in the order first touched
    (a name may repeat)."""
    starts = [s[0] for s in spans]
    with tempfile.NamedTemporaryFile(suffix='.lackey') as log:
        subprocess.run(['valgrind', '--tool=lackey', '--trace-mem=yes', '--log-file=' + log.name, binary, *args],
                       check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(log.name, errors='replace') as trace:
            for line in trace:
                fields = line.split()
                if line.startswith('==') or len(fields) != 2:
                    continue
                try:
                    address = int(fields[1].split(',')[0], 16)
                except ValueError:
                    continue
                i = bisect.bisect_right(starts, address) - 1
                if i >= 0 and address < spans[i][1]:
                    yield spans[i][2]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    cli = os.path.join(build, 'tools', 'hwaccel')
    if not os.access(cli, os.X_OK):
        sys.exit(f'startup-order.py: no {cli} (build the static CLI first)')
    with tempfile.TemporaryDirectory() as work:
        # Valgrind 3.19 cannot read clang's DWARF 5; the symbol table is enough.
        binary = os.path.join(work, 'hwaccel')
        subprocess.run(['strip', '--strip-debug', '-o', binary, cli], check=True)
        spans = symbols(binary)
        # dict keys: each name once, in the order first seen.
        order = dict.fromkeys(name for args in COMMANDS for name in touched(binary, args, spans))
        variants = {}
        for name in sorted({s[2] for s in spans}):
            if m := ISA_VARIANT.match(name):
                variants.setdefault(m.group(1), []).append(name)

        def with_variants(name):
            m = ISA_VARIANT.match(name)
            return variants.get(m.group(1), [name]) if m else [name]

        result = list(dict.fromkeys(n for name in order for n in with_variants(name)))
    with open(ORDER_FILE, 'w') as f:
        f.write('# The symbols the static CLI touches as it starts and runs `detect`, `--version` and\n'
                '# `backends`, in the order first touched: lld lays them out side by side\n'
                '# (meson.build, "start-up layout"). Written by tools/startup-order.py.\n')
        f.write('\n'.join(result) + '\n')
    print(f'{ORDER_FILE}: {len(result)} symbols')


if __name__ == '__main__':
    main()
