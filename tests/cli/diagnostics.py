#!/usr/bin/env python3
"""hwaccel doctor, --summary and diagnostic logging, through the CLI.

usage: diagnostics.py HWACCEL FIXTURES_DIR SUMMARY_SCHEMA GOLDEN_DIR

- `hwaccel doctor --fixture D --json --pretty` for every fixtures/doctor/D
  matches D/expected-doctor.json (HWACCEL_UPDATE_GOLDENS=1 rewrites them) and
  exits 1; each case names the cause it is there for.
- `hwaccel summary` and `hwaccel detect --summary` print the same document,
  valid against docs/summary.schema.json, for every fixture machine.
- Logging: stdout is byte for byte the same with -vvv as without; every
  stderr line of --log-format json is a JSON object with time, level, event;
  the trace event stream of the 8-GPU fixture matches a golden with times
  and durations masked.
"""
import json
import os
import pathlib
import subprocess
import sys

import jsonschema

hwaccel, fixtures, schema_path, golden_dir = sys.argv[1:5]
fixtures = pathlib.Path(fixtures)
golden_dir = pathlib.Path(golden_dir)
update = os.environ.get("HWACCEL_UPDATE_GOLDENS") == "1"
env = dict(os.environ)
env.pop("HWACCEL_LOG", None)
env.pop("HWACCEL_BACKENDS", None)
failures = []


def run(args, extra_env=None):
    e = dict(env)
    if extra_env:
        e.update(extra_env)
    return subprocess.run([hwaccel, *args], capture_output=True, text=True, env=e, timeout=120)


# The cause each doctor fixture must be diagnosed with.
causes = {
    "nvidia-driver-not-loaded": "has no kernel driver bound to it",
    "amd-kfd-not-readable": "/dev/kfd is not readable and writable by this user",
    "cuda-visible-devices-empty": "CUDA_VISIBLE_DEVICES is set to",
    "container-without-nvidia-nodes": "the container was started without its device nodes",
    "nvidia-smi-no-driver-communication": "couldn't communicate with the NVIDIA driver",
}
cases = sorted(p for p in (fixtures / "doctor").iterdir() if p.is_dir())
if sorted(p.name for p in cases) != sorted(causes):
    failures.append(f"doctor fixtures {[p.name for p in cases]} differ from the causes tested {sorted(causes)}")
for case in cases:
    r = run(["doctor", "--fixture", str(case), "--json", "--pretty"])
    if r.returncode != 1:
        failures.append(f"doctor {case.name}: exit {r.returncode}, expected 1 (stderr: {r.stderr.strip()})")
        continue
    report = json.loads(r.stdout)
    blocking = [f for f in report["findings"] if f["blocking"]]
    if report["usable"] or not blocking:
        failures.append(f"doctor {case.name}: no blocking finding")
    if not any(causes.get(case.name, "\0") in f["cause"] for f in blocking):
        failures.append(f"doctor {case.name}: no finding says {causes.get(case.name)!r}")
    for f in report["findings"]:
        for key in ("cause", "remedy"):
            if not f[key] or "\n" in f[key]:
                failures.append(f"doctor {case.name}: a finding's {key} is not one sentence")
    golden = case / "expected-doctor.json"
    if update:
        golden.write_text(r.stdout)
    elif not golden.exists() or golden.read_text() != r.stdout:
        failures.append(f"doctor {case.name}: output differs from {golden} (HWACCEL_UPDATE_GOLDENS=1 rewrites it)")
    text = run(["doctor", "--fixture", str(case)])
    if text.returncode != 1 or "remedy:" not in text.stdout:
        failures.append(f"doctor {case.name} (text): exit {text.returncode}, no remedy line")

r = run(["doctor", "--fixture", str(fixtures / "machines" / "h200-sxm-firecracker-driver-580"), "--json"])
if r.returncode != 0 or not json.loads(r.stdout)["usable"]:
    failures.append(f"doctor on the healthy H200 capture: exit {r.returncode}: {r.stdout[:400]}")

schema = json.loads(pathlib.Path(schema_path).read_text())
for machine in sorted((fixtures / "machines").iterdir()):
    a = run(["summary", "--fixture", str(machine)])
    b = run(["detect", "--summary", "--fixture", str(machine)])
    if a.returncode != 0 or a.stdout != b.stdout:
        failures.append(f"summary {machine.name}: `summary` and `detect --summary` differ or failed")
        continue
    try:
        jsonschema.validate(json.loads(a.stdout), schema)
    except jsonschema.ValidationError as e:
        failures.append(f"summary {machine.name}: {e.message}")

node = str(fixtures / "machines" / "dgx-h100-8x-nvswitch")
plain = run(["detect", "--fixture", node, "--no-timings"])
logged = run(["detect", "--fixture", node, "--no-timings", "-vvv", "--log-format", "json"])
if plain.stdout != logged.stdout or not plain.stdout:
    failures.append("logging changed what detect prints on stdout")
events = []
for line in logged.stderr.splitlines():
    try:
        e = json.loads(line)
    except json.JSONDecodeError:
        failures.append(f"a log line is not JSON: {line[:200]}")
        continue
    if not all(k in e for k in ("time", "level", "event")):
        failures.append(f"a log line lacks time, level or event: {line[:200]}")
    e.pop("time", None)
    e.pop("elapsed_us", None)
    events.append(json.dumps(e, sort_keys=True))
levels = {json.loads(e)["level"] for e in events}
if not {"trace", "debug", "info"} <= levels:
    failures.append(f"-vvv gave levels {sorted(levels)}")
golden = golden_dir / "events-dgx-h100-8x-nvswitch.jsonl"
stream = "\n".join(events) + "\n"
if update:
    golden.write_text(stream)
elif not golden.exists() or golden.read_text() != stream:
    failures.append(f"the trace event stream differs from {golden} (HWACCEL_UPDATE_GOLDENS=1 rewrites it)")
quiet = run(["detect", "--fixture", node, "--no-timings", "--log-format", "json"], {"HWACCEL_LOG": "warn"})
if quiet.stdout != plain.stdout:
    failures.append("HWACCEL_LOG=warn changed stdout")
if any(json.loads(line)["level"] != "warn" for line in quiet.stderr.splitlines()):
    failures.append("HWACCEL_LOG=warn printed events below warn")
# At warn, the registry's warnings are what is printed: one event a warning.
warned = fixtures / "doctor" / "cuda-visible-devices-empty"
w_plain = json.loads(run(["detect", "--fixture", str(warned), "--no-timings"]).stdout)
w_logged = run(["detect", "--fixture", str(warned), "--no-timings", "--log-format", "json"], {"HWACCEL_LOG": "warn"})
w_events = [json.loads(line) for line in w_logged.stderr.splitlines()]
if not w_plain["warnings"] or len(w_events) != len(w_plain["warnings"]) or any(e["event"] != "warning" for e in w_events):
    failures.append(f"HWACCEL_LOG=warn: {len(w_events)} events for {len(w_plain['warnings'])} warnings")
bad = run(["detect", "--fixture", node], {"HWACCEL_LOG": "loud"})
if bad.returncode != 2 or "HWACCEL_LOG" not in bad.stderr:
    failures.append(f"HWACCEL_LOG=loud: exit {bad.returncode}, expected 2 with a message")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
