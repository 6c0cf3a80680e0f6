#!/bin/sh
# wine_test.sh HWACCEL_EXE HANG_BAT: hwaccel.exe under Wine with a virtual X
# display (DXGI needs one), in a Wine prefix of its own that is removed after.
# Wine is told to report one known adapter (HKCU\Software\Wine\Direct3D:
# VideoMemorySize in MiB, VideoPciVendorID, VideoPciDeviceID); the test checks
# that `hwaccel.exe detect` reports exactly that adapter, that `plan` fits a
# model by its memory, and that a tool that hangs is ended at the deadline.
set -eu
exe=$1
hang=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'WINEPREFIX="$work/prefix" wineserver -k 2>/dev/null || true; rm -rf "$work"' EXIT
cp "$exe" "$work/hwaccel.exe"
mkdir -p "$work/tools"
cp "$hang" "$work/tools/hang-smi.bat"
# A Windows machine's fixture, replayed by hwaccel.exe itself.
cp -r "$here/../../fixtures/machines/windows-rtx4090-nvidia-smi-dxgi" "$work/fixture"
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
exec xvfb-run -a python3 "$here/wine_checks.py" "$work"
