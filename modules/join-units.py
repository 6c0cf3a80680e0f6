#!/usr/bin/env python3
"""Joins units of one named module into one translation unit.

    join-units.py OUTPUT SOURCE...
    join-units.py --partitions OUTPUT PRIMARY PARTITION...

Each SOURCE is a module implementation unit:

    // comment
    module;
    #include <...>            <- global module fragment
    module hwaccel.detect;    <- the module declaration (the same in every SOURCE)
    ...                       <- the unit's purview

OUTPUT holds every SOURCE's global module fragment, then the module
declaration once, then every SOURCE's purview in order, each piece behind a
#line directive, so that diagnostics, __FILE__ and line tables name the
original file and line. Quoted includes are rewritten to paths relative to
OUTPUT's folder, since the compiler looks them up beside the file that
includes them and OUTPUT lives in the build tree.

Why: Meson's unity builds cannot join module units (a translation unit holds
one module declaration), and a unit's own code is only part of its cost: the
templates it instantiates (strings, vectors, tl::expected, simdjson's DOM)
are instantiated and optimised again in every unit, and joining the units of
a module compiles each of them once (docs/benchmarks.md, "Build").
Names at namespace scope of one unit must not clash with another's, even in
unnamed namespaces, as in any unity build.

With --partitions, the PARTITIONs are interface partitions ("export module
M:P;") that the primary interface PRIMARY ("export module M;") re-exports,
and OUTPUT is one primary interface holding them all: PRIMARY's own imports,
then every partition's global module fragment, imports and purview. Each
interface unit pays to load the BMIs of what it imports (hwaccel.detectors'
20 partitions each loaded hwaccel.detect's), and one unit pays it once.
Partitions come in the order given, which must be one where each follows the
partitions it imports; those imports are dropped (they are all in OUTPUT).
PRIMARY's imports of partitions, and its quoted include of a generated
"*_partitions.inc" list of them, are dropped too; its other declarations come
after the partitions'. Partitions that PRIMARY does not re-export (module-
internal ones) must not be joined: their exports would become the module's.
"""
import os
import re
import sys

MODULE_DECL = re.compile(r'^(?:export\s+)?module\s+([A-Za-z_][A-Za-z0-9_.]*(?::[A-Za-z_][A-Za-z0-9_.]*)?)\s*;\s*$')
PARTITION_IMPORT = re.compile(r'^(export\s+)?import\s+:[A-Za-z0-9_.]+\s*;$')
PARTITION_LIST = re.compile(r'^#\s*include\s*"[^"]*_partitions\.inc"$')
IMPORT_DECL = re.compile(r'^(export\s+)?import\s+[A-Za-z_:][A-Za-z0-9_.:]*\s*;$')
QUOTED_INCLUDE = re.compile(r'^(\s*#\s*include\s*)"([^"]+)"(.*)$')


def fail(message):
    sys.exit(f'join-units.py: {message}')


def line_directive(number, path, out_dir):
    shown = os.path.relpath(path, out_dir)
    return f'#line {number} "{shown}"\n'


def rewrite_include(line, source_dir, out_dir):
    match = QUOTED_INCLUDE.match(line)
    if not match:
        return line
    target = os.path.join(source_dir, match.group(2))
    if not os.path.exists(target):
        return line  # found through the include path, as before
    return f'{match.group(1)}"{os.path.relpath(target, out_dir)}"{match.group(3)}\n'


def leading_imports(purview):
    """(the import declarations before the first other declaration, the lines after them)."""
    imports, index = [], 0
    for index, line in enumerate(purview):
        stripped = line.strip()
        if IMPORT_DECL.match(stripped):
            imports.append(stripped + '\n')
        elif stripped and not stripped.startswith('//'):
            break
    else:
        index = len(purview)
    return imports, purview[index:] if imports else purview


def split_unit(path):
    """(fragment lines, fragment first line, module name, purview lines, purview first line)."""
    with open(path, encoding='utf-8') as f:
        lines = f.readlines()
    fragment_start = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if fragment_start is None and stripped == 'module;':
            fragment_start = number
            continue
        match = MODULE_DECL.match(stripped)
        if match:
            if fragment_start is None:
                fragment, first = [], number
            else:
                fragment, first = lines[fragment_start:number - 1], fragment_start + 1
            return fragment, first, match.group(1), lines[number:], number + 1
    fail(f'{path}: no module declaration ("module NAME;") found')


def primary_parts(path):
    """(module name, fragment, fragment first line, imports, rest of the purview, its first line)."""
    fragment, first, name, purview, purview_first = split_unit(path)
    if ':' in name:
        fail(f'{path}: {name} is a partition, not a primary interface')
    imports, rest = leading_imports(purview)
    for line in imports:
        match = PARTITION_IMPORT.match(line.strip())
        if match and not match.group(1):
            fail(f'{path}: "{line.strip()}" does not re-export the partition, which joining would export')
    imports = [line for line in imports if not PARTITION_IMPORT.match(line.strip())]
    rest_first = purview_first + len(purview) - len(rest)
    # The generated list of partition imports becomes a blank line, which
    # keeps the #line numbering of what follows.
    rest = ['\n' if PARTITION_LIST.match(line.strip()) or PARTITION_IMPORT.match(line.strip()) else line
            for line in rest]
    return name, fragment, first, imports, rest, rest_first


def main():
    args = sys.argv[1:]
    primary = None
    if args[:1] == ['--partitions']:
        if len(args) < 4:
            fail('usage: join-units.py --partitions OUTPUT PRIMARY PARTITION...')
        primary, args = args[2], [args[1]] + args[3:]
    if len(args) < 2:
        fail('usage: join-units.py OUTPUT SOURCE...')
    output, sources = args[0], args[1:]
    out_dir = os.path.dirname(os.path.abspath(output))
    units = [(os.path.abspath(s), *split_unit(s)) for s in sources]
    if primary is None:
        names = {unit[3] for unit in units}
        declaration, first_imports = None, []
    else:
        primary_name, primary_fragment, fragment_first, first_imports, primary_rest, rest_first = primary_parts(primary)
        names = {unit[3].partition(':')[0] for unit in units}
        if any(':' not in unit[3] for unit in units):
            fail('every unit joined with --partitions must be a partition ("export module M:P;")')
        declaration = f'export module {primary_name};\n'
        names.add(primary_name)
    if len(names) != 1:
        fail(f'the units belong to different modules: {", ".join(sorted(names))}')

    text = ['// Generated by modules/join-units.py from:\n']
    if primary is not None:
        text.append(f'//   {os.path.relpath(os.path.abspath(primary), out_dir)}\n')
    text += [f'//   {os.path.relpath(unit[0], out_dir)}\n' for unit in units]
    text.append('module;\n')
    if primary is not None:
        text.append(line_directive(fragment_first, os.path.abspath(primary), out_dir))
        text += [rewrite_include(line, os.path.dirname(os.path.abspath(primary)), out_dir) for line in primary_fragment]
    for path, fragment, first, _, _, _ in units:
        text.append(line_directive(first, path, out_dir))
        text += [rewrite_include(line, os.path.dirname(path), out_dir) for line in fragment]
    text.append(declaration or f'module {names.pop()};\n')
    text += first_imports
    # Imports must come first in a purview: every unit's leading imports go
    # here, before any unit's declarations. A joined partition's imports of
    # its siblings are dropped: they are all in this unit.
    purviews = []
    for path, _, _, _, purview, first in units:
        imports, rest = leading_imports(purview)
        for line in imports:
            if primary is not None and PARTITION_IMPORT.match(line.strip()):
                continue
            if line not in text:
                text += [line_directive(first, path, out_dir), line]
        purviews.append((path, rest, first + len(purview) - len(rest)))
    for path, purview, first in purviews:
        text.append(line_directive(first, path, out_dir))
        text += [rewrite_include(line, os.path.dirname(path), out_dir) for line in purview]
        if purview and not purview[-1].endswith('\n'):
            text.append('\n')
    if primary is not None:
        # The primary's own declarations may use any partition's: they come last.
        text.append(line_directive(rest_first, os.path.abspath(primary), out_dir))
        text += [rewrite_include(line, os.path.dirname(os.path.abspath(primary)), out_dir) for line in primary_rest]

    content = ''.join(text)
    # Unchanged output keeps its time stamp: ninja then skips the compile.
    try:
        with open(output, encoding='utf-8') as f:
            if f.read() == content:
                return
    except FileNotFoundError:
        pass
    with open(output, 'w', encoding='utf-8') as f:
        f.write(content)


if __name__ == '__main__':
    main()
