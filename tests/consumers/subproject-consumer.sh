#!/bin/sh
# Builds tests/consumers/subproject, a Meson project that gets hwaccel through
# a wrap (subprojects/hwaccel -> this source tree), and runs its C++ module and
# C API programs on a fixture.
# usage: subproject-consumer.sh SOURCE_ROOT CXX CC FIXTURE_DIR
set -eu
src_root=$1 cxx=$2 cc=$3 fixture=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hwaccel-subproject.XXXXXX")
trap 'rm -rf "$work"' EXIT
# meson test points LD_LIBRARY_PATH at the build tree: the consumers must load
# the library they were linked against.
unset LD_LIBRARY_PATH

cp -R "$here/subproject" "$work/project"
cp "$here/module/consumer.cpp" "$here/c/consumer.c" "$work/project/"
ln -s "$src_root" "$work/project/subprojects/hwaccel"
# plain: no optimisation, the library compiles in about half a minute on 2 cores.
CXX=$cxx CC=$cc meson setup "$work/build" "$work/project" --buildtype=plain \
  -Dhwaccel:tests=false -Dhwaccel:cli=false -Dhwaccel:benchmarks=false > "$work/setup.log" ||
  { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" -j 2 > "$work/build.log" || { cat "$work/build.log"; exit 1; }

"$work/build/consumer" "$fixture" > "$work/module.json"
diff -u "$fixture/expected.json" "$work/module.json"
echo "subproject module consumer reproduced $fixture/expected.json"
"$work/build/c-consumer" "$fixture" "$work/c.json" > "$work/c.txt"
python3 "$here/check_c_output.py" "$fixture/expected.json" "$work/c.txt" "$work/c.json"
