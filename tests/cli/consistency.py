#!/usr/bin/env python3
"""The CLI speaks one way across its subcommands.

usage: consistency.py HWACCEL FIXTURES_DIR

- Every subcommand that prints JSON takes --json (a no-op where JSON is the
  default, said so in its --help) and prints JSON with it; --json and --table
  exclude each other.
- `fleet scan --exec` runs a program named by an absolute or a relative path
  as well as one looked up on PATH, without a shell: `;` and `$(...)` in a
  word are that word's text; a template whose program names {host} is refused.
- Failures are one stderr line, "hwaccel COMMAND: MESSAGE", with the exit
  status of docs/cli.md (2 bad usage, 1 an operation that failed).
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

hwaccel, fixtures = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2])
machine = fixtures / "machines" / "dgx-h100-8x-nvswitch"
doctor_case = fixtures / "doctor" / "nvidia-driver-not-loaded"
env = {k: v for k, v in os.environ.items() if not k.startswith("HWACCEL_") or k == "HWACCEL_FIXTURES"}
env["NO_COLOR"] = "1"
failures = []


def run(args, cwd=None):
    return subprocess.run([hwaccel, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def check(ok, what):
    if not ok:
        failures.append(what)


def json_output(name, args, codes=(0,), lines=False):
    r = run(args)
    check(r.returncode in codes, f"{name}: exit {r.returncode}, expected {codes}: {r.stderr.strip()[:300]}")
    try:
        if lines:
            for line in r.stdout.splitlines():
                json.loads(line)
        else:
            json.loads(r.stdout)
    except ValueError as e:
        failures.append(f"{name}: not JSON ({e}): {r.stdout[:200]!r}")


with tempfile.TemporaryDirectory() as tmp:
    work = pathlib.Path(tmp)
    for host in ("gpu-a", "gpu-b"):
        r = run(["detect", "--fixture", str(machine), "--no-timings", "--host", host])
        (work / f"{host}.json").write_text(r.stdout)
    fleet = work / "fleet.json"
    fleet.write_text(run(["fleet", "scan", str(work / "gpu-a.json"), str(work / "gpu-b.json")]).stdout)
    workloads = work / "workloads.json"
    workloads.write_text(json.dumps({"workloads": [{"name": "a", "model": "llama-3.1-8b", "replicas": 1,
                                                    "quantization": "bf16"}]}))
    db = work / "scans.sqlite"
    run(["fleet", "scan", "--db", str(db), "--quiet", str(work / "gpu-a.json")])

    # --json everywhere JSON is printed.
    json_output("detect", ["detect", "--fixture", str(machine), "--json", "--no-timings"])
    json_output("bare hwaccel", ["--fixture", str(machine), "--json", "--no-timings"])
    json_output("summary", ["summary", "--fixture", str(machine), "--json"])
    json_output("doctor", ["doctor", "--fixture", str(doctor_case), "--json"], codes=(0, 1))
    json_output("metrics", ["metrics", "--fixture", str(machine), "--json"])
    json_output("plan", ["plan", "--model", "llama-3.1-8b", "--devices", "1xH100-SXM-80GB", "--json"])
    json_output("train", ["train", "--params", "7B", "--method", "full", "--devices", "1xH100-SXM-80GB", "--json"])
    json_output("recommend", ["recommend", "--model", "llama-3.1-8b", "--quant", "bf16", "--json"])
    json_output("specs", ["specs", "--json"])
    json_output("models", ["models", "--json"])
    json_output("place", ["place", "--fleet", str(fleet), "--workloads", str(workloads), "--json"], codes=(0, 3))
    json_output("fleet scan", ["fleet", "scan", str(work / "gpu-a.json"), "--json"])
    json_output("fleet show", ["fleet", "show", str(fleet), "--json"])
    json_output("fleet history", ["fleet", "history", "--db", str(db), "--json"])
    json_output("fleet diff", ["fleet", "diff", str(fleet), str(fleet), "--json"])
    json_output("fleet check", ["fleet", "check", "--baseline", str(fleet), "--current", str(fleet), "--json"])
    json_output("watch", ["watch", "--fixture", str(machine), "--json", "--duration", "0.5", "--interval", "0.2"],
                lines=True)
    for command in (["detect"], ["summary"], ["fleet", "scan"], ["watch"]):
        help_text = run([*command, "--help"]).stdout
        check("--json" in help_text and "the default" in help_text, f"{' '.join(command)} --help: --json not said to be the default")
    for args in (["detect", "--fixture", str(machine), "--json", "--table"],
                 ["fleet", "scan", str(work / "gpu-a.json"), "--json", "--table"],
                 ["watch", "--fixture", str(machine), "--json", "--format", "table"]):
        check(run(args).returncode == 2, f"{' '.join(args[:2])}: --json with a table accepted")

    # `hwaccel` and `hwaccel detect` alone take no parser: the same document
    # as `detect --json`, the same settings from the environment, and the
    # same error for a bad one.
    def live_document(args, extra_env=None):
        r = subprocess.run([hwaccel, *args], capture_output=True, text=True, timeout=120,
                           env={**env, **(extra_env or {})})
        check(r.returncode == 0, f"{args}: exit {r.returncode}: {r.stderr.strip()[:300]}")
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            failures.append(f"{args}: not JSON: {r.stdout[:200]!r}")
            return None, []
        backends = sorted(doc.pop("timings_us", {}))
        for device in doc.get("devices", []):
            for volatile in ("memory_free_bytes", "memory_used_bytes", "utilization_percent", "temperature_c",
                             "power_watts"):
                device.pop(volatile, None)
        doc.get("system", {}).get("cpu", {}).pop("memory_available_bytes", None)
        return doc, backends

    parsed, parsed_backends = live_document(["detect", "--json"])
    for args in ([], ["detect"]):
        doc, backends = live_document(args)
        check(doc == parsed and backends == parsed_backends, f"hwaccel {' '.join(args)}: not what detect --json gives")
    only_cpu = {"HWACCEL_BACKENDS": "cpu"}
    alone_ran = live_document(["detect"], only_cpu)[1]
    parsed_ran = live_document(["detect", "--json"], only_cpu)[1]
    check(alone_ran == parsed_ran and "cpu" in alone_ran and "cuda" not in alone_ran and "cuda" in parsed_backends,
          f"HWACCEL_BACKENDS=cpu: `hwaccel detect` ran {alone_ran}, `hwaccel detect --json` {parsed_ran}")
    bad = {**env, "HWACCEL_BACKENDS": "cuda,warp-drive"}
    alone = subprocess.run([hwaccel, "detect"], capture_output=True, text=True, timeout=120, env=bad)
    with_parser = subprocess.run([hwaccel, "detect", "--json"], capture_output=True, text=True, timeout=120, env=bad)
    check(alone.returncode == with_parser.returncode != 0 and alone.stderr == with_parser.stderr
          and alone.stderr.startswith("hwaccel detect: "),
          f"HWACCEL_BACKENDS=cuda,warp-drive: {alone.returncode} {alone.stderr.strip()!r} against "
          f"{with_parser.returncode} {with_parser.stderr.strip()!r}")

    # fleet scan --exec: a program by path, absolute or relative, run without a shell.
    agent = work / "bin" / "agent"
    agent.parent.mkdir()
    agent.write_text('#!/bin/sh\n[ "$2" = "x;touch pwned" ] || exit 9\ncat "$(dirname "$0")/../$1.json"\n')
    agent.chmod(0o755)
    for template, cwd in ((f"{agent} {{host}} 'x;touch pwned'", None), ("./bin/agent {host} 'x;touch pwned'", work)):
        r = run(["fleet", "scan", "--hosts", "gpu-a,gpu-b", "--exec", template], cwd=cwd)
        check(r.returncode == 0, f"--exec {template!r}: exit {r.returncode}: {r.stderr.strip()}")
        try:
            nodes = json.loads(r.stdout)["nodes"]
            check(all("registry" in n for n in nodes) and len(nodes) == 2, f"--exec {template!r}: {r.stdout[:300]}")
        except (ValueError, KeyError) as e:
            failures.append(f"--exec {template!r}: {e}: {r.stdout[:200]!r}")
        check(not (work / "pwned").exists(), f"--exec {template!r}: a ';' reached a shell")
    refused = run(["fleet", "scan", "--hosts", "gpu-a", "--exec", "{host}-agent {host}"])
    check(refused.returncode == 2 and "may not name {host}" in refused.stderr,
          f"a program named by the host: exit {refused.returncode}: {refused.stderr.strip()}")

    # One error style: one line, "hwaccel COMMAND: ...", and the documented status.
    for args, code, prefix in (
        (["plan", "--model", "llama-3.1-8b", "--batch", "0"], 2, "hwaccel plan: batch '0': "),
        (["train", "--params", "7B", "--method", "full", "--zero", "4"], 2, "hwaccel train: zero '4': "),
        (["recommend", "--model", "llama-3.1-8b", "--quant", "bf16", "--provider", "moon"], 2,
         "hwaccel recommend: provider 'moon': "),
        (["specs", "--device-specs", str(work / "missing.json")], 1, "hwaccel specs: device-specs: "),
        (["fleet", "show", str(work / "missing.json")], 1, "hwaccel fleet: cannot open "),
        (["fleet", "scan", str(work / "gpu-a.json"), "--concurrency", "0"], 2, "hwaccel fleet: concurrency '0': "),
        (["place", "--fleet", str(fleet), "--workloads", str(workloads), "--exact-max", "65"], 2,
         "hwaccel place: exact-max '65': "),
        (["detect", "--timeout-ms", "600001"], 2, "hwaccel detect: timeout-ms '600001': "),
        (["--timeout-ms", "0"], 2, "hwaccel: timeout-ms '0': "),
    ):
        r = run(args)
        lines = r.stderr.splitlines()
        check(r.returncode == code and len(lines) == 1 and lines[0].startswith(prefix),
              f"{' '.join(args[:3])}: exit {r.returncode} (expected {code}), stderr {r.stderr!r}")

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("the subcommands agree: --json, command templates, one error style")
