#!/usr/bin/env python3
"""hwaccel top without a terminal: --once and --json on the fixture machines.

usage: top_once.py HWACCEL FIXTURES_DIR GOLDEN_DIR

- `hwaccel top --once --width 120 --fixture M` of every fixture machine matches
  GOLDEN_DIR/M.txt (HWACCEL_UPDATE_GOLDENS=1 rewrites them), and every line
  fits the width but the warnings printed after the frame.
- The machines with processes list them: users, container PIDs, MIG rows,
  DRM clients; `--json` has the same processes as the library's sample.
- A golden without a machine is an error (a machine was renamed or removed).
"""
import json
import os
import pathlib
import subprocess
import sys

hwaccel, fixtures, golden_dir = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
update = os.environ.get("HWACCEL_UPDATE_GOLDENS") == "1"
env = {k: v for k, v in os.environ.items() if not k.startswith("HWACCEL_") or k == "HWACCEL_FIXTURES"}
env["LC_ALL"] = "C"
failures = []


def run(*args):
    return subprocess.run([hwaccel, *args], capture_output=True, text=True, env=env, timeout=120)


machines = sorted(p for p in (fixtures / "machines").iterdir() if (p / "fixture.json").exists())
for machine in machines:
    r = run("top", "--once", "--width", "120", "--fixture", str(machine))
    if r.returncode != 0:
        failures.append(f"{machine.name}: exit {r.returncode}: {r.stderr.strip()[:300]}")
        continue
    frame = r.stdout.split("\nwarning: ")[0]
    for line in frame.splitlines():
        if len(line) > 120:
            failures.append(f"{machine.name}: a line of {len(line)} characters: {line[:60]}...")
    golden = golden_dir / f"{machine.name}.txt"
    if update:
        golden.write_text(r.stdout)
    elif not golden.exists() or golden.read_text() != r.stdout:
        failures.append(f"{machine.name}: top --once differs from {golden} (HWACCEL_UPDATE_GOLDENS=1 rewrites it)")
names = {m.name for m in machines}
for golden in golden_dir.glob("*.txt"):
    if golden.stem not in names:
        failures.append(f"{golden}: no fixture machine of that name")

# What the machines with processes must show.
expect = {
    "dgx-h100-busy-containers": ["PROCESSES (9 listed", "41021      27 alice", "3310       - carol", "61877"],
    "a100-40gb-mig-processes": ["cuda:0/mig:0        23817       1 svc-infer", "2 processes", "19.5G   1 process\n"],
    "amd-2x-mi210-busy-fdinfo": ["rocm:0               7412       - dana       drm         4.2G", "llama-server"],
}
for name, needles in expect.items():
    out = run("top", "--once", "--width", "160", "--fixture", str(fixtures / "machines" / name)).stdout
    for needle in needles:
        if needle not in out:
            failures.append(f"{name}: top --once lacks {needle!r}")
    doc = json.loads(run("top", "--json", "--fixture", str(fixtures / "machines" / name)).stdout)
    if not doc.get("processes"):
        failures.append(f"{name}: top --json has no processes")
    for p in doc.get("processes", []):
        if not p.get("device_id") or not ("pid" in p or "driver_pid" in p):
            failures.append(f"{name}: a JSON process without device or PID: {p}")

# Flags that need another.
r = run("top", "--width", "80")
if r.returncode == 0:
    failures.append("top --width without --once was accepted")
r = run("top", "--fixture", str(fixtures / "machines" / "dgx-h100-busy-containers"))
if r.returncode == 0 or "terminal" not in r.stderr:
    failures.append(f"top without a terminal: exit {r.returncode}, stderr {r.stderr.strip()!r}")

for f in failures:
    print("FAIL:", f)
print(f"{len(machines)} machines, {len(failures)} failures")
sys.exit(1 if failures else 0)
