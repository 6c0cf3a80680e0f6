#!/usr/bin/env python3
"""Checks the wraps in subprojects/ without a network.

usage: check_wraps.py SOURCE_ROOT WORK_DIR CXX

1. Every subprojects/*.wrap is a [wrap-file] naming an https release tarball,
   its file name and sha256, and our patch_directory, and has a [provide]
   section; the packagefiles' meson.build declares the provided variable and
   include_dir_abs (read by hwaccel's meson.build).
2. For the header-only wraps (range-v3, tl-expected), a scratch project gets
   them through dependency() with --force-fallback-for: Meson unpacks a
   tarball from subprojects/packagecache, lays our packagefiles over it and
   serves the [provide]d dependency, and a program using both compiles against
   the unpacked headers and runs. Upstream's tarballs cannot be downloaded
   here, so the tarballs are made from the installed headers (same layout as
   upstream's, top folder = the wrap's `directory`) and the scratch copies of
   the wraps carry their hash instead of upstream's.
simdjson's tarball must be compiled (singleheader/simdjson.cpp), which the
installed package does not ship: its wrap gets the static checks only.
"""
import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

HEADER_ONLY = {
    # wrap name -> (folder under the tarball's top folder, installed folder to copy)
    "range-v3": ("include/range", "/usr/include/range"),
    "tl-expected": ("include/tl", "/usr/include/tl"),
}

problems = []


def problem(message):
    problems.append(message)
    print("FAIL: " + message, file=sys.stderr)


def read_wrap(path):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    return parser


def check_wrap_file(source_root, name, wrap):
    if not wrap.has_section("wrap-file"):
        return problem(f"{name}.wrap has no [wrap-file] section")
    section = wrap["wrap-file"]
    for key in ("directory", "source_url", "source_filename", "source_hash", "patch_directory"):
        if not section.get(key):
            problem(f"{name}.wrap: [wrap-file] lacks {key}")
    if not section.get("source_url", "").startswith("https://"):
        problem(f"{name}.wrap: source_url is not an https URL")
    if not re.fullmatch(r"[0-9a-f]{64}", section.get("source_hash", "")):
        problem(f"{name}.wrap: source_hash is not a sha256")
    if not wrap.has_section("provide") or not list(wrap["provide"].items()):
        return problem(f"{name}.wrap has no [provide] entries")
    build_file = os.path.join(source_root, "subprojects", "packagefiles", section.get("patch_directory", ""),
                              "meson.build")
    if not os.path.isfile(build_file):
        return problem(f"{name}.wrap: {build_file} does not exist")
    with open(build_file, encoding="utf-8") as f:
        build = f.read()
    for dependency, variable in wrap["provide"].items():
        if dependency == "dependency_names":
            continue
        if not re.search(rf"^{re.escape(variable)}\s*=\s*declare_dependency\(", build, re.M):
            problem(f"{build_file} does not declare {variable}, which {name}.wrap provides as {dependency}")
    if not re.search(r"^include_dir_abs\s*=", build, re.M):
        problem(f"{build_file} does not set include_dir_abs")
    print(f"ok: {name}.wrap -> {section.get('directory')} ({', '.join(k for k, _ in wrap['provide'].items())})")


def make_tarball(path, top, inner, installed):
    with tarfile.open(path, "w:gz") as tar:
        tar.add(installed, arcname=f"{top}/{inner}")
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def build_scratch_project(source_root, work, cxx, wraps):
    project = os.path.join(work, "project")
    subprojects = os.path.join(project, "subprojects")
    cache = os.path.join(subprojects, "packagecache")
    os.makedirs(cache)
    shutil.copytree(os.path.join(source_root, "subprojects", "packagefiles"), os.path.join(subprojects, "packagefiles"))
    for name, (inner, installed) in HEADER_ONLY.items():
        section = wraps[name]["wrap-file"]
        digest = make_tarball(os.path.join(cache, section["source_filename"]), section["directory"], inner, installed)
        with open(os.path.join(source_root, "subprojects", name + ".wrap"), encoding="utf-8") as f:
            text = f.read()
        text = text.replace(section["source_hash"], digest)
        # Never download: a fetch would fail at once instead of hanging offline.
        text = text.replace(section["source_url"], "file:///nonexistent/" + section["source_filename"])
        with open(os.path.join(subprojects, name + ".wrap"), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(project, "meson.build"), "w", encoding="utf-8") as f:
        f.write("""project('wrap-check', 'cpp', default_options: ['cpp_std=c++20'])
deps = [dependency('range-v3'), dependency('tl-expected')]
foreach name : ['range-v3', 'tl-expected']
  dir = subproject(name).get_variable('include_dir_abs')
  assert(import('fs').is_dir(dir), name + ': include_dir_abs ' + dir + ' is not a folder')
  message(name + ' include_dir_abs ' + dir)
endforeach
executable('check', 'check.cpp', dependencies: deps)
""")
    with open(os.path.join(project, "check.cpp"), "w", encoding="utf-8") as f:
        f.write("""#include <cstdio>
#include <vector>
#include <range/v3/numeric/accumulate.hpp>
#include <range/v3/view/transform.hpp>
#include <tl/expected.hpp>
tl::expected<int, const char*> sum_of_squares(const std::vector<int>& v) {
  if (v.empty()) return tl::make_unexpected("empty");
  return ranges::accumulate(v | ranges::views::transform([](int x) { return x * x; }), 0);
}
int main() {
  const auto r = sum_of_squares({1, 2, 3});
  std::printf("%d %s\\n", r.value_or(-1), sum_of_squares({}).error());
  return r == 14 ? 0 : 1;
}
""")
    build = os.path.join(work, "build")
    env = dict(os.environ, CXX=cxx)
    run(["meson", "setup", build, project, "--force-fallback-for=range-v3,tl-expected"], env)
    run(["ninja", "-C", build], env)
    out = run([os.path.join(build, "check")], env)
    if out.strip() != "14 empty":
        problem(f"scratch program printed {out.strip()!r}, expected '14 empty'")
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = json.dumps(json.load(f))
    for name in HEADER_ONLY:
        folder = wraps[name]["wrap-file"]["directory"]
        if f"subprojects/{folder}/include" not in commands:
            problem(f"the scratch program was not compiled against subprojects/{folder}/include")
        else:
            print(f"ok: {name} served from subprojects/{folder} through dependency('{name}')")


def run(argv, env):
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        raise SystemExit(f"FAIL: {' '.join(argv)} exited with {result.returncode}")
    return result.stdout


def main():
    source_root, work, cxx = sys.argv[1:4]
    wraps = {}
    wrap_dir = os.path.join(source_root, "subprojects")
    for entry in sorted(os.listdir(wrap_dir)):
        if entry.endswith(".wrap"):
            name = entry[: -len(".wrap")]
            wraps[name] = read_wrap(os.path.join(wrap_dir, entry))
            check_wrap_file(source_root, name, wraps[name])
    for needed in ("range-v3", "simdjson", "tl-expected"):
        if needed not in wraps:
            problem(f"subprojects/{needed}.wrap is missing")
    if problems:
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    missing = [installed for _, installed in HEADER_ONLY.values() if not os.path.isdir(installed)]
    if missing:
        print(f"SKIP: the scratch build needs the installed headers {', '.join(missing)}")
        return 77
    build_scratch_project(source_root, work, cxx, wraps)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
