#!/bin/sh
# Builds and runs consumers against a DESTDIR install of this build, found
# through pkg-config, as a user of an installed hwaccel would:
#   module  a C++ program that imports the modules, its BMIs built from the
#           installed interface sources by share/hwaccel/hwaccel-build-bmis
#   c       a C11 program using the C API, compiled by a C compiler
# usage: install-consumers.sh module|c BUILD_DIR PREFIX LIBDIR COMPILER FIXTURE_DIR
set -eu
kind=$1 build=$2 prefix=$3 libdir=$4 compiler=$5 fixture=$6
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hwaccel-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
# meson test points LD_LIBRARY_PATH at the build tree: the consumers must load
# the library they were linked against.
unset LD_LIBRARY_PATH

meson install -C "$build" --destdir "$work/stage" --no-rebuild --quiet
root=$work/stage$prefix
case $libdir in /*) libpath=$work/stage$libdir ;; *) libpath=$root/$libdir ;; esac
export PKG_CONFIG_PATH="$libpath/pkgconfig"
pc() { pkg-config --define-variable=prefix="$root" "$@" hwaccel; }
pc --exists
echo "pkg-config: hwaccel $(pc --modversion): $(pc --cflags --libs)"

case $kind in
  module)
    builder=$(pc --variable=bmi_builder)
    "$builder" --cxx "$compiler" "$work/bmi"
    # shellcheck disable=SC2046
    "$compiler" -std=c++20 -pthread @"$work/bmi/hwaccel-modules.flags" $(pc --cflags) \
      -c "$here/module/consumer.cpp" -o "$work/consumer.o"
    # The same program with the other way of finding the BMIs.
    # shellcheck disable=SC2046
    "$compiler" -std=c++20 -pthread -fprebuilt-module-path="$work/bmi" $(pc --cflags) \
      -c "$here/module/consumer.cpp" -o "$work/consumer-prebuilt.o"
    # shellcheck disable=SC2046
    "$compiler" -pthread "$work/consumer.o" $(pc --libs) -Wl,-rpath,"$libpath" -o "$work/consumer"
    "$work/consumer" "$fixture" > "$work/out.json"
    diff -u "$fixture/expected.json" "$work/out.json"
    echo "module consumer reproduced $fixture/expected.json"
    ;;
  c)
    # shellcheck disable=SC2046
    "$compiler" -std=c11 -Wall -Wextra -Wpedantic -Werror $(pc --cflags) \
      "$here/c/consumer.c" $(pc --libs) -Wl,-rpath,"$libpath" -o "$work/c-consumer"
    "$work/c-consumer" "$fixture" "$work/c.json" > "$work/c.txt"
    cat "$work/c.txt"
    python3 "$here/check_c_output.py" "$fixture/expected.json" "$work/c.txt" "$work/c.json"
    ;;
  *)
    echo "usage: install-consumers.sh module|c BUILD_DIR PREFIX LIBDIR COMPILER FIXTURE_DIR" >&2
    exit 2
    ;;
esac
