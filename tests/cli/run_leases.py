#!/usr/bin/env python3
"""hwaccel run, leases and usage on fixture machines, with real lease files
in a temporary lease directory and a real SQLite usage database.

usage: run_leases.py HWACCEL FIXTURES_DIR

- 64 concurrent `run --devices 1 --wait -- job` on an idle 8-GPU machine:
  never two jobs on one device at a time, all finish, 64 usage records that
  add up;
- kill -9 of a job and of `hwaccel run` itself frees the device within 1 s;
- a job in a new PID namespace is listed with its namespace (root only);
  a stale lease file with no lock is taken over;
- busy devices (processes in nvidia-smi's list or DRM fdinfo, memory held),
  --min-free-memory, MIG instances leased one by one, the variables per vendor;
- hostile: a symlinked or world-writable lease directory, a garbage quota,
  an unknown device, a corrupt usage database (the job runs, the records wait
  and are written when the database is back); a quota that refuses;
- leases --release ends a holder.
"""
import json
import os
import pathlib
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

hwaccel, fixtures = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
machines = fixtures / "machines"
failures = []
work = pathlib.Path(tempfile.mkdtemp(prefix="hwaccel-run-"))
leases = work / "leases"
db = work / "usage.sqlite"
env = {k: v for k, v in os.environ.items() if not k.startswith("HWACCEL_")}
started = []


def run(*args, check_rc=None, timeout=120, extra_env=None):
    e = dict(env)
    if extra_env:
        e.update(extra_env)
    r = subprocess.run([hwaccel, *args], capture_output=True, text=True, timeout=timeout, env=e)
    if check_rc is not None and r.returncode != check_rc:
        failures.append(f"hwaccel {' '.join(args[:6])}...: exit {r.returncode}, expected {check_rc}: {r.stderr.strip()[:400]}")
    return r


def held():
    r = run("leases", "--lease-dir", str(leases), "--json")
    return json.loads(r.stdout) if r.returncode == 0 else None


def wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# An idle copy of the 8-GPU DGX: no process, little memory in use.
idle = work / "idle-dgx"
shutil.copytree(machines / "dgx-h100-8x-nvswitch", idle, symlinks=True)
manifest = json.loads((idle / "fixture.json").read_text())
telemetry = next(c for c in manifest["commands"] if c["argv"][1].startswith("--query-gpu=pci.bus_id,uuid,utilization"))
rows = (idle / "commands" / telemetry["stdout"]).read_text().splitlines()
idle_row = next(r for r in rows if r.startswith("00000000:9A:00.0")).split(", ")
rows = [rows[0]] + [", ".join(r.split(", ")[:2] + idle_row[2:]) for r in rows[1:]]
(idle / "commands" / telemetry["stdout"]).write_text("\n".join(rows) + "\n")
(idle / "commands" / "compute-apps.out").write_text("gpu_bus_id, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n")
manifest["commands"].append({"argv": ["nvidia-smi", "--query-compute-apps=gpu_bus_id,gpu_uuid,pid,process_name,used_gpu_memory",
                                      "--format=csv,nounits"], "stdout": "compute-apps.out", "exit": 0})
(idle / "fixture.json").write_text(json.dumps(manifest, indent=2))
common = ["--fixture", str(idle), "--lease-dir", str(leases)]

try:
    # 64 jobs at once on 8 devices: each records its device and when it held it.
    log = work / "jobs"
    log.mkdir()
    job = ("import os, sys, time; d = os.environ['CUDA_VISIBLE_DEVICES']; a = time.time(); time.sleep(0.2); "
           "open(sys.argv[1], 'w').write(f'{d} {a} {time.time()}')")
    procs = [subprocess.Popen([hwaccel, "run", *common, "--usage-db", str(db), "--devices", "1", "--wait", "--timeout", "300",
                               "--", sys.executable, "-c", job, str(log / f"{i}")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) for i in range(64)]
    start = time.monotonic()
    codes = [p.wait(timeout=600) for p in procs]
    took = time.monotonic() - start
    print(f"64 jobs of 0.2 s on 8 devices: {took:.1f} s")
    if any(codes):
        failures.append(f"64 jobs: exit codes {sorted(set(codes))}: {procs[codes.index(next(c for c in codes if c))].stderr.read()[:300]}")
    spans = {}
    for f in log.iterdir():
        device, a, b = f.read_text().split()
        spans.setdefault(device, []).append((float(a), float(b)))
    if sum(len(v) for v in spans.values()) != 64:
        failures.append(f"64 jobs: {sum(len(v) for v in spans.values())} wrote their record")
    if len(spans) != 8 or not all(d.startswith("GPU-") for d in spans):
        failures.append(f"64 jobs: devices seen {sorted(spans)}")
    for device, s in spans.items():
        s.sort()
        for (a1, b1), (a2, b2) in zip(s, s[1:]):
            if a2 < b1:
                failures.append(f"two jobs held {device} at once: {a1:.3f}-{b1:.3f} and {a2:.3f}-{b2:.3f}")
    records = sqlite3.connect(db).execute("SELECT count(*), sum(ended_at IS NOT NULL), count(DISTINCT device_id) FROM leases").fetchone()
    if records != (64, 64, 8):
        failures.append(f"accounting: (records, closed, devices) = {records}, expected (64, 64, 8)")
    usage = json.loads(run("usage", "--usage-db", str(db), "--by", "device", "--json", check_rc=0).stdout)
    if sum(line["leases"] for line in usage["usage"]) != 64 or len(usage["usage"]) != 8:
        failures.append(f"usage --by device: {usage}")
    if held() != []:
        failures.append(f"leases left after the jobs: {held()}")

    # kill -9 of the job, then of hwaccel run itself: the lease goes within 1 s.
    for victim in ("job", "run"):
        p = subprocess.Popen([hwaccel, "run", *common, "--no-usage", "--device", "cuda:3", "--", "sleep", "30"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        started.append(p)
        if not wait_until(lambda: held() and held()[0]["device_id"] == "cuda:3", 10):
            failures.append(f"kill -9 of the {victim}: the lease never showed")
            continue
        if victim == "job":
            children = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            os.kill(int(children[0]), signal.SIGKILL)
        else:
            os.kill(p.pid, signal.SIGKILL)
        t0 = time.monotonic()
        freed = wait_until(lambda: held() == [], 1.0)
        print(f"kill -9 of the {victim}: lease gone after {time.monotonic() - t0:.3f} s")
        if not freed:
            failures.append(f"kill -9 of the {victim}: the lease outlived it by more than 1 s")
        p.wait(timeout=10)
        if victim == "job" and p.returncode != 128 + 9:
            failures.append(f"run's exit after its job was killed: {p.returncode}, expected 137")

    # --plan: as many devices as the plan takes, in one domain.
    r = run("run", *common, "--no-usage", "--plan", "llama-3.1-70b", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES", check_rc=0)
    if len(r.stdout.strip().split(",")) != 2 or "takes 2 devices in one domain" not in r.stderr:
        failures.append(f"--plan llama-3.1-70b on 8 H100s: {r.stdout.strip()!r} {r.stderr.strip()}")

    # A run killed with SIGKILL left its record open: the next lease closes it.
    p = subprocess.Popen([hwaccel, "run", *common, "--usage-db", str(db), "--device", "cuda:2", "--", "sleep", "30"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    started.append(p)
    def open_records() -> int:
        try:
            return sqlite3.connect(db).execute("SELECT count(*) FROM leases WHERE ended_at IS NULL").fetchone()[0]
        except sqlite3.Error:
            return 0
    # The lease file appears before its usage record is written: wait for both.
    if wait_until(lambda: bool(held()) and open_records() == 1, 10):
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        wait_until(lambda: held() == [], 2)
        opened = sqlite3.connect(db).execute("SELECT count(*) FROM leases WHERE ended_at IS NULL").fetchone()[0]
        r = run("run", *common, "--usage-db", str(db), "--device", "cuda:1", "--", "true", check_rc=0)
        closed = sqlite3.connect(db).execute("SELECT count(*) FROM leases WHERE ended_at IS NULL").fetchone()[0]
        if opened != 1 or closed != 0 or "closed now" not in r.stderr:
            failures.append(f"an abandoned record: {opened} open before, {closed} after: {r.stderr.strip()}")

    # A stale file (no lock held) is taken over; its garbage record does not matter.
    identity = "0000_18_00.0"
    (leases / f"{identity}.lease").write_text("not a record")
    r = run("run", *common, "--no-usage", "--device", "cuda:0", "--", "true", check_rc=0)

    # A job in a PID namespace of its own (root only) is named with its namespace.
    if os.geteuid() == 0 and shutil.which("unshare"):
        p = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", hwaccel, "run", *common, "--no-usage", "--device",
                              "cuda:5", "--", "sleep", "30"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        started.append(p)
        ours = int(os.readlink("/proc/self/ns/pid").split("[")[1].rstrip("]"))
        if wait_until(lambda: bool(held()), 10):
            h = held()[0]
            if h.get("pid_namespace") in (None, ours) or h["pid"] > 100:
                failures.append(f"a job in a new PID namespace is not named with it: {h} (ours {ours})")
        else:
            failures.append("the job in a new PID namespace never held its lease")
        p.kill()
        p.wait(timeout=10)
        if not wait_until(lambda: held() == [], 5):
            failures.append(f"the namespaced job's lease outlived it: {held()}")

    # Busy devices are not handed out; the reasons are named.
    busy = ["--fixture", str(machines / "dgx-h100-busy-containers"), "--lease-dir", str(leases), "--no-usage"]
    r = run("run", *busy, "--devices", "2", "--", "true", check_rc=1)
    if "process uses it" not in r.stderr or "cuda:4" in r.stderr.split("(")[1]:
        failures.append(f"busy DGX, 2 devices: {r.stderr.strip()}")
    r = run("run", *busy, "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES", check_rc=0)
    if r.stdout.strip() != "GPU-2c8a5c6d-bf3e-4d9a-ab4c-8e7f6a5b4c32":
        failures.append(f"busy DGX: the idle GPU 4 was not given: {r.stdout!r}")
    run("run", *busy, "--device", "cuda:0", "--", "true", check_rc=1)
    # MIG instances one by one.
    mig = ["--fixture", str(machines / "a100-40gb-mig-enabled"), "--lease-dir", str(leases), "--no-usage"]
    r = run("run", *mig, "--device", "cuda:0/mig:1", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES", check_rc=0)
    if not r.stdout.strip().startswith("MIG-"):
        failures.append(f"a MIG instance is not given by its MIG UUID: {r.stdout!r}")
    r = run("run", *mig, "--device", "cuda:0", "--", "true", check_rc=2)
    if "partitioned" not in r.stderr:
        failures.append(f"leasing a partitioned GPU whole: {r.stderr.strip()}")
    r = run("run", *mig, "--min-free-memory", "30G", "--", "true", check_rc=1)
    if "30.0 GiB asked" not in r.stderr and "30 GiB asked" not in r.stderr:
        failures.append(f"--min-free-memory on 19.5 GiB instances: {r.stderr.strip()}")
    busy_mig = ["--fixture", str(machines / "a100-40gb-mig-processes"), "--lease-dir", str(leases), "--no-usage"]
    run("run", *busy_mig, "--device", "cuda:0/mig:0", "--", "true", check_rc=1)
    # AMD: the DRM clients make both busy; the idle pair gives ROCR and HIP variables.
    run("run", "--fixture", str(machines / "amd-2x-mi210-busy-fdinfo"), "--lease-dir", str(leases), "--no-usage", "--", "true", check_rc=1)
    r = run("run", "--fixture", str(machines / "amd-2x-mi210-pcie"), "--lease-dir", str(leases), "--no-usage", "--devices", "2",
            "--", "sh", "-c", "echo $ROCR_VISIBLE_DEVICES ${HIP_VISIBLE_DEVICES-unset}", check_rc=0,
            extra_env={"HIP_VISIBLE_DEVICES": "3"})
    if r.stdout.split() != ["0,1", "unset"]:
        failures.append(f"AMD variables: {r.stdout!r}")
    # --max-utilization: the busy DGX's GPUs are above 90 %.
    r = run("run", *busy, "--device", "cuda:4", "--max-utilization", "0.5", "--", "true", check_rc=0)

    # Hostile set-ups.
    link = work / "link"
    link.symlink_to(leases)
    r = run("run", "--fixture", str(idle), "--lease-dir", str(link), "--no-usage", "--", "true", check_rc=1)
    if "symbolic link" not in r.stderr:
        failures.append(f"a symlinked lease directory: {r.stderr.strip()}")
    loose = work / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    r = run("run", "--fixture", str(idle), "--lease-dir", str(loose), "--no-usage", "--", "true", check_rc=1)
    if "sticky" not in r.stderr:
        failures.append(f"a world-writable lease directory without the sticky bit: {r.stderr.strip()}")
    garbage = work / "quota.json"
    garbage.write_text('{"users": {"root": "lots"}}')
    r = run("run", *common, "--usage-db", str(db), "--quota", str(garbage), "--", "true", check_rc=2)
    if "users.root" not in r.stderr:
        failures.append(f"a garbage quota: {r.stderr.strip()}")
    r = run("run", *common, "--no-usage", "--device", "cuda:42", "--", "true", check_rc=2)
    if "no device cuda:42" not in r.stderr:
        failures.append(f"an unknown device: {r.stderr.strip()}")
    marker = work / "ran"
    r = run("run", *common, "--no-usage", "--device", "cuda:42", "--", "touch", str(marker))
    if marker.exists():
        failures.append("the command ran although no device was leased")
    # A corrupt database: the job runs, the records wait in the journal, then go in.
    corrupt = work / "corrupt.sqlite"
    corrupt.write_bytes(b"SQLite format 3\0" + os.urandom(4096))
    r = run("run", *common, "--usage-db", str(corrupt), "--", "true", check_rc=0)
    if "kept in" not in r.stderr:
        failures.append(f"a corrupt usage database: no warning that the records are kept: {r.stderr.strip()}")
    corrupt.unlink()
    r = run("run", *common, "--usage-db", str(corrupt), "--", "true", check_rc=0)
    n = sqlite3.connect(corrupt).execute("SELECT count(*), sum(ended_at IS NOT NULL) FROM leases").fetchone()
    if n != (2, 2):
        failures.append(f"the kept records were not written when the database came back: {n}")
    # A quota that refuses: root has used more than a second's worth.
    quota = work / "tiny.json"
    quota.write_text('{"period_days": 1, "users": {"root": 0.0001}}')
    run("run", *common, "--usage-db", str(db), "--", "sleep", "0.5", check_rc=0)
    r = run("run", *common, "--usage-db", str(db), "--quota", str(quota), "--", "touch", str(marker), check_rc=2)
    if "has used" not in r.stderr or marker.exists():
        failures.append(f"a quota that should refuse: {r.stderr.strip()}")

    # leases --release: the holder gets SIGTERM and its lease ends.
    p = subprocess.Popen([hwaccel, "run", *common, "--no-usage", "--device", "cuda:6", "--", "sleep", "30"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    started.append(p)
    if wait_until(lambda: bool(held()), 10):
        run("leases", "--lease-dir", str(leases), "--release", "cuda:6", check_rc=0)
        p.wait(timeout=10)
        if p.returncode != 128 + 15 or not wait_until(lambda: held() == [], 2):
            failures.append(f"leases --release: run exited {p.returncode}, leases {held()}")
    run("leases", "--lease-dir", str(leases), "--release", "cuda:6", check_rc=1)
finally:
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(work, ignore_errors=True)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
