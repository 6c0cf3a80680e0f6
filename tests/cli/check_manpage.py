#!/usr/bin/env python3
"""Checks the generated hwaccel(1) against the CLI it documents: every
subcommand and every option of every --help must appear in the man page, with
the ENVIRONMENT and EXIT STATUS sections.

usage: check_manpage.py HWACCEL MAN_PAGE
"""
import os
import re
import subprocess
import sys


def help_text(hwaccel, *args):
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([hwaccel, *args, "--help"], env=env, check=True, capture_output=True, text=True).stdout


def options(text):
    """Every option name of a --help text ("-h,--help" gives -h and --help)."""
    names = set()
    for spec in re.findall(r"^  (-[-\w]+(?:,--[-\w]+)?)", text, re.M):
        names.update(spec.split(","))
    return sorted(names)


def main():
    hwaccel, page_path = sys.argv[1:3]
    with open(page_path, encoding="utf-8") as f:
        page = re.sub(r"\\f[BIRP]", "", f.read()).replace("\\-", "-")
    top = help_text(hwaccel)
    listing = top.split("Subcommands:\n")[1].split("\n\n")[0]
    commands = re.findall(r"^  (\w+)\s", listing, re.M)
    missing = []
    for section in ('.SH ENVIRONMENT', '.SH "EXIT STATUS"', '.SH COMMANDS'):
        if section not in page:
            missing.append(f"section {section}")
    for opt in options(top):
        if not re.search(rf"(?<![-\w]){re.escape(opt)}(?![-\w])", page):
            missing.append(f"hwaccel {opt}")
    for command in commands:
        if f'.SS "hwaccel {command}' not in page:
            missing.append(f"subsection for hwaccel {command}")
        for opt in options(help_text(hwaccel, command)):
            if not re.search(rf"(?<![-\w]){re.escape(opt)}(?![-\w])", page):
                missing.append(f"hwaccel {command} {opt}")
    if not commands:
        missing.append("no subcommand found in hwaccel --help")
    if missing:
        print("missing from " + page_path + ":\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    print(f"man page documents {len(commands)} subcommands and all their options")
    return 0


if __name__ == "__main__":
    sys.exit(main())
