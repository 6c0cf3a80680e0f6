#!/usr/bin/env python3
"""Generates the hwaccel(1) man page from the CLI's own --help output, its one
source: help2man formats `hwaccel --help`, and every subcommand's --help
becomes a subsection of COMMANDS.

usage: make-manpage.py HWACCEL HELP2MAN OUTPUT
"""
import os
import re
import subprocess
import sys
import tempfile

OPTION_COLUMN = 30  # CLI11 puts an option's description at this column


def run_help(hwaccel, *args):
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    return subprocess.run([hwaccel, *args, "--help"], env=env, check=True, capture_output=True, text=True).stdout


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def subcommands(top_help):
    names, listing = [], False
    for line in top_help.splitlines():
        if line.strip() == "Subcommands:":
            listing = True
        elif listing and re.match(r"^  \S", line):
            names.append(line.split()[0])
        elif listing and line and not line.startswith(" "):
            break
    return names


def command_section(name, help_text):
    """One subcommand's --help as roff: usage, options as .TP items, then its
    own footer paragraphs up to the shared Environment/Exit status part."""
    out = []
    lines = help_text.splitlines()
    usage = next(line for line in lines if line.startswith("Usage: "))
    out.append(f'.SS "{roff(usage[len("Usage: "):])}"')
    summary = lines[: lines.index(usage)]
    if summary:
        out.append(roff(" ".join(s.strip() for s in summary)))
    i = lines.index("Options:") + 1
    while i < len(lines) and lines[i].startswith("  "):
        line = lines[i]
        if len(line) > OPTION_COLUMN and line[OPTION_COLUMN - 2:OPTION_COLUMN] != "  ":
            spec, description = line.strip(), ""  # a long spec: the description starts on the next line
        else:
            spec, description = line[:OPTION_COLUMN].strip(), line[OPTION_COLUMN:].strip()
        i += 1
        while i < len(lines) and lines[i].startswith(" " * OPTION_COLUMN):
            description = (description + " " + lines[i].strip()).strip()
            i += 1
        flag, _, value = spec.partition(" ")
        out.append(".TP")
        out.append(f"\\fB{roff(flag)}\\fR" + (f" \\fI{roff(value)}\\fR" if value else ""))
        out.append(roff(description))
    # The command's own paragraphs; indented lines (examples) keep their layout.
    in_example = False
    for line in lines[i:]:
        if line in ("Environment:", "Exit status:"):
            break
        if not line.strip():
            if in_example:
                out.append(".fi")
                in_example = False
            out.append(".PP")
        elif line.startswith("  "):
            if not in_example:
                out.append(".nf")
                in_example = True
            out.append(roff(line))
        else:
            out.append(roff(line))
    if in_example:
        out.append(".fi")
    return "\n".join(out)


def main():
    hwaccel, help2man, output = sys.argv[1:4]
    top = run_help(hwaccel)
    sections = [command_section(name, run_help(hwaccel, name)) for name in subcommands(top)]
    with tempfile.TemporaryDirectory() as tmp:
        include = os.path.join(tmp, "commands.h2m")
        with open(include, "w", encoding="utf-8") as f:
            f.write("[COMMANDS]\n" + "\n".join(sections) + "\n")
            f.write("[SEE ALSO]\ndocs/cli.md, docs/json.md, docs/fixtures.md and docs/getting-started.md "
                    "in the hwaccel sources.\n")
        page = os.path.join(tmp, "hwaccel.1")
        env = dict(os.environ, NO_COLOR="1", COLUMNS="200")  # SOURCE_DATE_EPOCH, if set, fixes the date
        subprocess.run([help2man, "--no-info", "--no-discard-stderr",
                        "--name=detect AI accelerators and report what they can do",
                        f"--include={include}", f"--output={page}", hwaccel], env=env, check=True)
        with open(page, encoding="utf-8") as f:
            text = f.read()
    # help2man knows ENVIRONMENT but makes other headings subsections.
    text = text.replace('.SS "Exit status:"', '.SH "EXIT STATUS"')
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
