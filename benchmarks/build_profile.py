#!/usr/bin/env python3
"""Where the build's compile time goes (docs/benchmarks.md, "Build").

    benchmarks/build_profile.py [--dir DIR] [--source SRC] [--jobs N] [--top N] [--time-trace]
                                [--target T ...] [-- MESON_SETUP_OPTIONS...]

Configures DIR (default /tmp/hwaccel-build-profile) afresh with clang-19 and
the options of tools/bootstrap's build/ (-O2, line tables, werror, Python)
unless others follow `--`, builds it (or only the given targets) with ninja,
and prints, per kind of step (library objects, module interfaces, unit tests,
CLI, ...):
  - wall: ninja's own log summed, each step's start to end while the other
    jobs ran beside it (what a CI log shows);
  - cpu: the user+system time of each compiler process, measured by running
    the compiler through this script (--exec); a busy or shared machine,
    whose other jobs stretch the wall time, does not inflate it;
and the slowest steps. With --time-trace every compile also writes clang's
-ftime-trace JSON, and the report adds how each kind splits into front end
(parsing, template instantiation) and back end (optimisation, code
generation).
"""
import argparse
import collections
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
DEFAULT_OPTIONS = ['-Dwerror=true', '-Dpython=enabled', '-Doptimization=2', '-Ddebug=false',
                   '-Dcpp_args=-gline-tables-only']


def run_compiler(argv):
    """The wrapper: runs the real compiler and appends its CPU time to the log."""
    real = os.environ.get('HWACCEL_PROFILE_CXX', 'clang++-19')
    log = os.environ.get('HWACCEL_PROFILE_LOG')
    trace = os.environ.get('HWACCEL_PROFILE_TRACE') == '1'
    args = list(argv)
    output = None
    for i, a in enumerate(args):
        if a == '-o' and i + 1 < len(args):
            output = args[i + 1]
    compiling = '-c' in args
    if trace and compiling:
        args.append('-ftime-trace')
    start = time.monotonic()
    child = subprocess.Popen([real] + args)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if log and output:
        with open(log, 'a', encoding='utf-8') as f:
            f.write(json.dumps({'output': output, 'cpu': usage.ru_utime + usage.ru_stime,
                                'wall': wall, 'compile': compiling}) + '\n')
    return code


def category(output):
    o = output
    if o.startswith('modules/') and o.endswith('.pcm'):
        return None  # the interface's .o is logged by the same step
    if o.startswith('modules/') and '.p/' in o and o.endswith('.o'):
        return 'library objects'
    if o.startswith('modules/') and o.endswith('.o'):
        return 'module interfaces'
    if o.startswith('tests/unit/') and o.endswith('.o'):
        return 'tests: unit'
    if o.startswith('tests/fuzz/') and o.endswith('.o'):
        return 'tests: fuzz'
    if o.startswith('tests/') and o.endswith('.o'):
        return 'tests: other'
    if o.startswith('tools/') and o.endswith('.o'):
        return 'CLI'
    if o.startswith('python/') and o.endswith('.o'):
        return 'Python extension'
    if o.startswith('subprojects/') and o.endswith('.o'):
        return 'subprojects'
    if o.startswith('benchmarks/') and o.endswith('.o'):
        return 'benchmarks'
    return 'links and other steps'


def ninja_log(build_dir):
    """{output: seconds} from .ninja_log, the last run of each output."""
    steps = {}
    with open(os.path.join(build_dir, '.ninja_log'), encoding='utf-8') as f:
        for line in f:
            if line.startswith('#'):
                continue
            parts = line.rstrip('\n').split('\t')
            if len(parts) >= 4:
                steps[parts[3]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return steps


def trace_split(build_dir, output):
    """(front end, back end) seconds of one compile's -ftime-trace, or None."""
    stem = os.path.splitext(os.path.join(build_dir, output))[0]
    for path in (stem + '.json', os.path.join(build_dir, output) + '.json'):
        if os.path.exists(path):
            break
    else:
        return None
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            events = json.load(f)['traceEvents']
    except (OSError, ValueError, KeyError):
        return None
    totals = collections.Counter()
    for e in events:
        if e.get('ph') == 'X' and e.get('name') in ('Total Frontend', 'Total Backend'):
            totals[e['name']] += e.get('dur', 0) / 1e6
    return totals['Total Frontend'], totals['Total Backend']


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--exec':
        sys.exit(run_compiler(sys.argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--dir', default='/tmp/hwaccel-build-profile')
    parser.add_argument('--source', default=SOURCE, help='the source tree to build (default: this one)')
    parser.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    parser.add_argument('--top', type=int, default=15)
    parser.add_argument('--time-trace', action='store_true')
    parser.add_argument('--target', action='append', default=[])
    parser.add_argument('--json', help='also write the figures to this file')
    parser.add_argument('setup', nargs='*', help='meson setup options (after --)')
    args = parser.parse_args()

    build_dir = os.path.abspath(args.dir)
    shutil.rmtree(build_dir, ignore_errors=True)
    os.makedirs(build_dir)
    log = os.path.join(build_dir, 'compiler-times.jsonl')
    wrapper = os.path.join(build_dir, 'profiled-c++')
    with open(wrapper, 'w', encoding='utf-8') as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "{os.path.abspath(__file__)}" --exec "$@"\n')
    os.chmod(wrapper, 0o755)
    env = dict(os.environ, CXX=wrapper, HWACCEL_PROFILE_LOG=log,
               HWACCEL_PROFILE_TRACE='1' if args.time_trace else '0')
    setup = args.setup or DEFAULT_OPTIONS
    subprocess.run(['meson', 'setup', build_dir, os.path.abspath(args.source)] + setup, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    os.remove(log) if os.path.exists(log) else None  # configure-time compiler checks
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(['ninja', '-C', build_dir, '-j', str(args.jobs)] + args.target, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = time.monotonic() - start

    walls = ninja_log(build_dir)
    cpus = {}
    with open(log, encoding='utf-8') as f:
        for line in f:
            entry = json.loads(line)
            cpus[os.path.relpath(os.path.join(build_dir, entry['output']), build_dir)
                 if not os.path.isabs(entry['output']) else os.path.relpath(entry['output'], build_dir)] = entry['cpu']
    rows = collections.defaultdict(lambda: {'steps': 0, 'wall': 0.0, 'cpu': 0.0, 'front': 0.0, 'back': 0.0})
    per_step = []
    for output, wall in walls.items():
        kind = category(output)
        if kind is None:
            continue
        cpu = cpus.get(output, 0.0)
        row = rows[kind]
        row['steps'] += 1
        row['wall'] += wall
        row['cpu'] += cpu
        if args.time_trace and output.endswith('.o'):
            split = trace_split(build_dir, output)
            if split:
                row['front'] += split[0]
                row['back'] += split[1]
        per_step.append((cpu, wall, output))

    print(f'build of {build_dir}: {elapsed:.0f} s wall with -j{args.jobs}, '
          f'{after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime:.0f} s of CPU in all')
    header = f'{"kind":26s} {"steps":>5s} {"wall":>8s} {"cpu":>8s}'
    if args.time_trace:
        header += f' {"front":>8s} {"back":>8s}'
    print(header)
    for kind, row in sorted(rows.items(), key=lambda kv: -kv[1]['cpu']):
        line = f'{kind:26s} {row["steps"]:5d} {row["wall"]:8.1f} {row["cpu"]:8.1f}'
        if args.time_trace:
            line += f' {row["front"]:8.1f} {row["back"]:8.1f}'
        print(line)
    print(f'{"total":26s} {sum(r["steps"] for r in rows.values()):5d} '
          f'{sum(r["wall"] for r in rows.values()):8.1f} {sum(r["cpu"] for r in rows.values()):8.1f}')
    print(f'\nslowest {args.top} steps (cpu, wall):')
    for cpu, wall, output in sorted(per_step, reverse=True)[:args.top]:
        print(f'  {cpu:6.1f} {wall:6.1f}  {output}')
    if args.json:
        with open(args.json, 'w', encoding='utf-8') as f:
            json.dump({'elapsed': elapsed, 'kinds': rows, 'steps': per_step}, f, indent=1)


if __name__ == '__main__':
    main()
