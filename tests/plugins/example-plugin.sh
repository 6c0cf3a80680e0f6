#!/bin/sh
# The Tenstorrent example plugin as a vendor ships it: this build installed
# into a temporary prefix (DESTDIR), the plugin built against it through
# pkg-config as a project of its own (examples/plugins/tenstorrent), its own
# tests run, the plugin installed into the prefix's plugin folder, then its
# fixture detected through the installed `hwaccel`, the C API and Python.
# usage: example-plugin.sh BUILD_DIR PREFIX LIBDIR SOURCE_DIR C_COMPILER python|no-python
set -eu
build=$1 prefix=$2 libdir=$3 source=$4 cc=$5 python=$6
work=$(mktemp -d "${TMPDIR:-/tmp}/hwaccel-plugin.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH HWACCEL_PLUGIN_PATH HWACCEL_PLUGIN_HOST
step() { printf '==> %s\n' "$*"; }

step "install hwaccel into a temporary prefix"
meson install -C "$build" --destdir "$work/stage" --no-rebuild --quiet
root=$work/stage$prefix
case $libdir in /*) libpath=$work/stage$libdir ;; *) libpath=$root/$libdir ;; esac
# The staged tree as the prefix itself: the plugin installs into its plugindir.
sed -i "s|^prefix=.*|prefix=$root|" "$libpath/pkgconfig/hwaccel.pc"
export PKG_CONFIG_PATH="$libpath/pkgconfig"
export PATH="$root/bin:$PATH"
export LD_LIBRARY_PATH="$libpath"
# A DESTDIR install is not where the CLI was built to find its plugin host.
export HWACCEL_PLUGIN_HOST="$root/libexec/hwaccel/hwaccel-plugin-host"
test -x "$HWACCEL_PLUGIN_HOST"

step "build the plugin against it (pkg-config), and run its tests"
meson setup --prefix "$root" "$work/tt" "$source/examples/plugins/tenstorrent" > "$work/tt-setup.log" || { cat "$work/tt-setup.log"; exit 1; }
meson compile -C "$work/tt" >/dev/null
meson test -C "$work/tt" --print-errorlogs
step "the template plugin builds against it too"
meson setup "$work/template" "$source/examples/plugins/template" >/dev/null
meson compile -C "$work/template" >/dev/null
HWACCEL_PLUGIN_PATH="$work/template" hwaccel backends | grep -q '^my_accel (plugin '
step "install it into the prefix's plugin folder"
meson install -C "$work/tt" --quiet
plugindir=$(pkg-config --variable=plugindir hwaccel)
case $plugindir in "$root"/*) ;; *) echo "plugindir $plugindir is outside the prefix" >&2; exit 1 ;; esac
test -f "$plugindir/tenstorrent.so"
export HWACCEL_PLUGIN_PATH="$plugindir"
fixture=$source/examples/plugins/tenstorrent/fixtures/n300-and-p150a

step "hwaccel detect --fixture"
hwaccel detect --fixture "$fixture" --no-timings > "$work/cli.json"
step "the C API (tests/consumers/c/consumer.c)"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags hwaccel) "$source/tests/consumers/c/consumer.c" \
  -L"$libpath" -lhwaccel -Wl,-rpath,"$libpath" -o "$work/c-consumer"
"$work/c-consumer" "$fixture" "$work/c.json" > /dev/null
if [ "$python" = python ]; then
step "Python"
site=$(find "$root" -type d -name hwaccel -path '*-packages/hwaccel' | head -n 1)
test -n "$site"
PYTHONPATH=$(dirname "$site") python3 - "$fixture" "$work/python.json" <<'PY'
import json, sys
import hwaccel
registry = hwaccel.detect(fixture=sys.argv[1])
ids = [d.id for d in registry.devices]
assert "tenstorrent:1" in ids, ids
json.dump({"ids": ids}, open(sys.argv[2], "w"))
PY
else
  echo "(no Python package in this build: the Python step is skipped)"
  python3 -c 'import json, sys; json.dump({"ids": [d["id"] for d in json.load(open(sys.argv[1]))["devices"]]}, open(sys.argv[2], "w"))' \
    "$work/c.json" "$work/python.json"
fi
python3 - "$work/cli.json" "$work/c.json" "$work/python.json" "$source/docs/registry.schema.json" <<'PY'
import json, sys
import jsonschema
cli = json.load(open(sys.argv[1]))
jsonschema.validate(cli, json.load(open(sys.argv[4])))
print("ok: the registry with the plugin's devices validates against docs/registry.schema.json")
c = json.load(open(sys.argv[2]))
py = json.load(open(sys.argv[3]))
want = ["tenstorrent:0", "tenstorrent:1"]
for name, ids in (("CLI", [d["id"] for d in cli["devices"]]), ("C API", [d["id"] for d in c["devices"]]), ("Python", py["ids"])):
    got = [i for i in ids if i.startswith("tenstorrent:")]
    assert got == want, f"{name}: {got}"
    print(f"ok: {name} sees {', '.join(got)}")
p150 = [d for d in c["devices"] if d["id"] == "tenstorrent:1"][0]
assert p150["name"] == "Tenstorrent Blackhole p150a" and p150["properties"]["plugin"] == "tenstorrent", p150
PY
echo "the example plugin detects its fixture through the CLI, the C API and Python"
