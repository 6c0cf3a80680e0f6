#!/usr/bin/env bash
# The Python package as users get it: `pip install --no-build-isolation .`
# into a fresh venv, `import hwaccel` outside the source tree, the pytest
# suite against the installed package, then `pip wheel` and the wheel
# installed into a second fresh venv. Offline (--no-index).
#
#   run-package-tests.sh PYTHON SOURCE_DIR
#
# meson-python builds in SOURCE_DIR/build-python/package (kept between runs,
# so a second run only rebuilds what changed; pyproject.toml says why it is
# two levels below the source root).
set -euo pipefail
python=$1
source_dir=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hwaccel-python.XXXXXX")
trap 'rm -rf "$work"' EXIT
builddir=build-python/package
# -O0: this checks the package, not the compiler's output, and it is the third
# full compile of the library in a CI run (a user's pip install keeps
# meson-python's -O2). Both pip commands use the same arguments, so the second
# reuses the first one's build.
settings=(--config-settings=builddir="$builddir" --config-settings=setup-args=-Doptimization=0)
step() { printf '==> %s\n' "$*"; }
# The package finds its own plugin host (hwaccel/bin/), not the build tree's.
unset HWACCEL_PLUGIN_HOST HWACCEL_PLUGIN_PATH

step "venv 1: pip install --no-build-isolation ."
mkdir -p "$source_dir/$builddir"
"$python" -m venv --system-site-packages "$work/venv"
(cd "$source_dir" && "$work/venv/bin/python" -m pip install --quiet --no-index --no-build-isolation \
  "${settings[@]}" .)

cd "$work"
step "import hwaccel outside the source tree"
"$work/venv/bin/python" -c 'import hwaccel; print(hwaccel.detect())'
"$work/venv/bin/python" - "$work" <<'PY'
import sys, hwaccel
assert hwaccel.__file__.startswith(sys.argv[1]), f"imported {hwaccel.__file__}, not the venv's package"
PY
"$work/venv/bin/hwaccel" --version

step "pytest"
HWACCEL_SOURCE_DIR="$source_dir" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  --rootdir "$source_dir/tests/python" "$source_dir/tests/python"

step "pip wheel, then the wheel into venv 2"
(cd "$source_dir" && "$work/venv/bin/python" -m pip wheel --quiet --no-index --no-build-isolation --no-deps \
  "${settings[@]}" -w "$work/wheels" .)
wheel=$(ls "$work"/wheels/hwaccel-*.whl)
"$python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for needed in ("hwaccel/__init__.py", "hwaccel/py.typed", "hwaccel/_native.pyi", "hwaccel/bin/hwaccel",
               "hwaccel/bin/hwaccel-plugin-host"):
    assert needed in names, f"{needed} is not in the wheel"
assert any(n.startswith("hwaccel/_native.") and n.endswith(".so") for n in names), "no extension module"
unwanted = [n for n in names if "/headers/" in n or n.endswith((".h", ".cppm", ".pc", ".1")) or "libhwaccel" in n]
assert not unwanted, f"the wheel holds what only C/C++ users need: {unwanted}"
print(f"wheel: {len(names)} files, no headers, man page or shared library")
PY
"$python" -m venv "$work/venv2"
"$work/venv2/bin/python" -m pip install --quiet --no-index "$wheel"
"$work/venv2/bin/python" -c 'import hwaccel; r = hwaccel.detect(); print(r); assert r.devices'
"$work/venv2/bin/python" -m hwaccel --version
step "done"
