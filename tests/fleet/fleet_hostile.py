#!/usr/bin/env python3
"""Fleet scans that meet bad nodes, and a scan of 1000 nodes.

A node agent on PATH answers per host name: one hangs, one exits non-zero,
one prints 50 MB, one prints garbage, the rest run `hwaccel detect
--fixture`. The scan must finish within its deadlines with a per-node error
for each bad one (and leave no process behind); a folder scan and the fleet
document's JSON Schema are checked on the way. Then 1000 fixture-backed
nodes are scanned through the command template.

    fleet_hostile.py HWACCEL FIXTURES_DIR FLEET_SCHEMA
"""

import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import jsonschema

AGENT = """#!/bin/sh
case "$1" in
  hangs) exec sleep 600 ;;
  fails) echo "node-agent: connection reset by peer" >&2; exit 3 ;;
  floods) head -c 52428800 /dev/zero | tr '\\0' '{' ;;
  garbage) printf 'Last login: Thu Nov 26\\n\\001\\002\\377 not json\\n' ;;
  *) exec "$HWACCEL" detect --fixture "$FIXTURE" --host "$1" --no-timings ;;
esac
"""


def main() -> int:
    hwaccel, fixtures, schema_path = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
    schema = json.loads(pathlib.Path(schema_path).read_text())
    work = pathlib.Path(tempfile.mkdtemp(prefix="hwaccel-fleet-"))
    failures = []
    try:
        agent = work / "node-agent"
        agent.write_text(AGENT)
        agent.chmod(agent.stat().st_mode | stat.S_IXUSR)
        env = dict(os.environ, PATH=f"{work}:{pathlib.Path(hwaccel).parent}:{os.environ.get('PATH', '')}",
                   HWACCEL=hwaccel, FIXTURE=str(fixtures / "machines" / "dgx-h100-8x-nvswitch"))

        started = time.monotonic()
        scan = subprocess.run([hwaccel, "fleet", "scan", "--hosts", "good-1,hangs,fails,floods,garbage,good-2",
                               "--exec", "node-agent {host}", "--deadline-ms", "3000", "--max-output-mib", "16"],
                              capture_output=True, text=True, env=env, timeout=120)
        took = time.monotonic() - started
        if scan.returncode != 0:
            print(f"the scan itself failed ({scan.returncode}): {scan.stderr}")
            return 1
        fleet = json.loads(scan.stdout)
        jsonschema.validate(fleet, schema)
        nodes = {n["host"]: n for n in fleet["nodes"]}
        expected = {"good-1": None, "good-2": None, "hangs": "timeout", "fails": "failed", "floods": "too_large",
                    "garbage": "parse_error"}
        for host, kind in expected.items():
            node = nodes.get(host)
            got = None if node is None or "registry" in node else node["error"]["kind"]
            if node is None or got != kind:
                failures.append(f"{host}: expected {kind or 'a registry'}, got {node and node.get('error')}")
        if "connection reset by peer" not in nodes.get("fails", {}).get("error", {}).get("message", ""):
            failures.append(f"fails: the node's own message is lost: {nodes.get('fails')}")
        if took > 30:
            failures.append(f"the scan took {took:.1f} s with a 3 s per-node deadline")
        left = subprocess.run(["pgrep", "-f", "sleep 600"], capture_output=True, text=True)
        if left.stdout.strip():
            failures.append(f"the hung node's process is still running: {left.stdout}")
        print(f"bad nodes: scan of 6 took {took:.1f} s")

        # A folder of registry files (what a DaemonSet leaves on shared storage).
        folder = work / "registries"
        folder.mkdir()
        for n in fleet["nodes"]:
            if "registry" in n:
                (folder / f"{n['host']}.json").write_text(json.dumps(n["registry"]))
        (folder / "broken.json").write_text('{"schema_version": 2, "devices": [')
        files = subprocess.run([hwaccel, "fleet", "scan", str(folder)], capture_output=True, text=True, timeout=60)
        folder_fleet = json.loads(files.stdout) if files.returncode == 0 else {"nodes": []}
        jsonschema.validate(folder_fleet, schema)
        kinds = sorted(n.get("error", {}).get("kind", "ok") for n in folder_fleet["nodes"])
        if kinds != ["ok", "ok", "parse_error"]:
            failures.append(f"folder scan: {kinds} {files.stderr}")
        table = subprocess.run([hwaccel, "fleet", "show", str(work / "none.json")], capture_output=True, text=True)
        if table.returncode != 1 or "cannot open" not in table.stderr:
            failures.append(f"show of a missing file: {table.returncode} {table.stderr}")

        # 1000 nodes through the command template, 32 at a time.
        hosts = work / "hosts.txt"
        hosts.write_text("".join(f"node-{i:04d}\n" for i in range(1000)))
        small = fixtures / "machines" / "kvm-epyc-2vcpu-capture"
        started = time.monotonic()
        big = subprocess.run([hwaccel, "fleet", "scan", "--hosts", str(hosts), "--exec",
                              f"hwaccel detect --fixture {small} --host {{host}} --no-timings", "--concurrency", "32",
                              "--db", str(work / "big.sqlite"), "--quiet"],
                             capture_output=True, text=True, env=env, timeout=600)
        took = time.monotonic() - started
        if big.returncode != 0:
            failures.append(f"1000-node scan exited {big.returncode}: {big.stderr[-500:]}")
        history = subprocess.run([hwaccel, "fleet", "history", "--db", str(work / "big.sqlite"), "--json"],
                                 capture_output=True, text=True)
        scans = json.loads(history.stdout) if history.returncode == 0 else []
        if len(scans) != 1 or scans[0]["nodes"] != 1000 or scans[0]["nodes_answered"] != 1000:
            failures.append(f"1000-node scan: {scans} {history.stderr}")
        print(f"1000 nodes: {took:.1f} s")

        # The database on a read-only mount (root: a read-only bind mount in a
        # private mount namespace), or a read-only file (others): a clear
        # error, and the scans already there still read.
        db = work / "big.sqlite"
        small_scan = [hwaccel, "fleet", "scan", "--hosts", "node-1", "--exec",
                      f"hwaccel detect --fixture {small} --host {{host}} --no-timings", "--db", str(db), "--quiet"]
        if os.geteuid() == 0:
            script = f'mount --make-rprivate / && mount --bind "{work}" "{work}" && mount -o remount,bind,ro "{work}" && exec "$@"'
            readonly = subprocess.run(["unshare", "--mount", "sh", "-c", script, "sh", *small_scan], capture_output=True,
                                      text=True, env=env, timeout=60)
        else:
            db.chmod(0o444)
            readonly = subprocess.run(small_scan, capture_output=True, text=True, env=env, timeout=60)
        if readonly.returncode != 1 or "read-only" not in readonly.stderr:
            failures.append(f"scan into a read-only database: exit {readonly.returncode}: {readonly.stderr}")
        else:
            print(f"read-only database: {readonly.stderr.strip()}")
        after = subprocess.run([hwaccel, "fleet", "history", "--db", str(db), "--json"], capture_output=True, text=True)
        if after.returncode != 0 or len(json.loads(after.stdout)) != 1:
            failures.append(f"the read-only database changed or stopped reading: {after.stdout}{after.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f)
    print("fleet scans with bad nodes: " + ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
