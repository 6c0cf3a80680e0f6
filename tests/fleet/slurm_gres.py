#!/usr/bin/env python3
"""`hwaccel export slurm` checked by Slurm's own parser.

For fixture machines (NVLink H100s, MIG instances, AMD partitions, xGMI
MI300X), `slurmd -G` (Debian's slurmd, offline, AuthType=auth/none) reads
the generated gres.conf with the node's generated NodeName line in a
temporary slurm.conf. slurmd insists that every File= be a device node, so
it runs in a private mount namespace with a tmpfs over /dev holding those
nodes (and /dev/null and friends bound in); the machine's /dev is never
touched. Each generated device must come back from slurmd with the same
type, files, cores and links, and slurmd must say nothing of an error. A
deliberately broken gres.conf must make it complain. On this machine, the
NodeName line must match `slurmd -C` field by field. Last, the health-check
script of deploy/slurm drains a node (through a stand-in scontrol) exactly when
`hwaccel fleet check` finds it differs from its baseline.

    slurm_gres.py HWACCEL FIXTURES_DIR HEALTHCHECK_SCRIPT
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

MACHINES = ["dgx-h100-8x-nvswitch", "a100-40gb-mig-enabled", "amd-mi300x-cpx-vm", "amd-8x-mi300x-xgmi"]
MAJORS = {"nvidia-caps": 235, "dri": 226, "nvidia": 195}

NAMESPACE = """set -e
mount --make-rprivate /
mkdir -p "$WORK/realdev"
mount --rbind /dev "$WORK/realdev"
mount -t tmpfs tmpfs /dev
for f in null zero random urandom; do touch /dev/$f; mount --bind "$WORK/realdev/$f" /dev/$f; done
while read -r path major minor; do
  mkdir -p "$(dirname "$path")"
  mknod "$path" c "$major" "$minor"
done < "$WORK/devices"
exec slurmd -G -N "$NODE"
"""


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)


def device_files(gres: str):
    files = []
    for line in gres.splitlines():
        for key in ("File=", "MultipleFiles="):
            m = re.search(rf"\b{key}(\S+)", line)
            if m:
                files += [f for f in m.group(1).split(",") if f not in files]
    return files


def major_of(path: str) -> int:
    for key, major in MAJORS.items():
        if key in path:
            return major
    return 1


def slurm_conf(work: pathlib.Path, node_line: str) -> str:
    return (f"ClusterName=hwaccel-test\nSlurmctldHost=localhost\nAuthType=auth/none\nCredType=cred/none\n"
            f"GresTypes=gpu\nSlurmdSpoolDir={work}/spool\nStateSaveLocation={work}/state\n"
            f"SlurmdPidFile={work}/slurmd.pid\nSlurmdLogFile={work}/slurmd.log\nProctrackType=proctrack/linuxproc\n"
            f"TaskPlugin=task/none\nSlurmdParameters=config_overrides\n{node_line}\nPartitionName=test Nodes=ALL\n")


def slurmd_parse(work: pathlib.Path, node: str, node_line: str, gres: str):
    (work / "slurm.conf").write_text(slurm_conf(work, node_line))
    (work / "gres.conf").write_text(gres)
    (work / "devices").write_text("".join(f"{f} {major_of(f)} {i}\n" for i, f in enumerate(device_files(gres))))
    for d in ("spool", "state"):
        (work / d).mkdir(exist_ok=True)
    env = dict(os.environ, SLURM_CONF=str(work / "slurm.conf"), WORK=str(work), NODE=node)
    return run(["unshare", "--mount", "sh", "-c", NAMESPACE], env=env, timeout=60)


def parsed_gres(stderr: str):
    """slurmd -G prints one 'Gres Name=... Type=... File=...' line per device."""
    out = []
    for line in stderr.splitlines():
        m = re.search(r"Gres Name=(\S+) Type=(\S+) Count=\d+ Index=\d+ ID=\d+ File=(\S+)(.*)", line)
        if m:
            fields = dict(kv.split("=", 1) for kv in m.group(4).split() if "=" in kv)
            out.append({"type": m.group(2), "file": m.group(3), "cores": fields.get("Cores"), "links": fields.get("Links")})
    return out


def expected_gres(gres: str):
    out = []
    for line in gres.splitlines():
        if not line.startswith("Name="):
            continue
        fields = dict(kv.split("=", 1) for kv in line.split())
        out.append({"type": fields["Type"], "file": fields.get("File") or fields.get("MultipleFiles"),
                    "cores": fields.get("Cores"), "links": fields.get("Links")})
    return out


def check_healthcheck(hwaccel: str, script: str, machine: pathlib.Path, work: pathlib.Path):
    """deploy/slurm/hwaccel-healthcheck with a stand-in scontrol that records its arguments."""
    failures = []
    bin_dir = work / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = work / "scontrol.calls"
    (bin_dir / "scontrol").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {calls}\n')
    (bin_dir / "scontrol").chmod(0o755)
    baseline = work / "baseline.json"
    baseline.write_text(run([hwaccel, "detect", "--fixture", str(machine), "--host", "gpu-07", "--no-timings"]).stdout)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}", HWACCEL=hwaccel,
               HWACCEL_BASELINE=str(baseline), SLURMD_NODENAME="gpu-07")
    cases = [("healthy", f"--fixture {machine}", 0, None),
             ("GPUs lost", f"--fixture {machine} --backends cpu", 1,
              "update NodeName=gpu-07 State=DRAIN Reason=hwaccel: expected 8 NVIDIA H100 80GB HBM3, found 0; cuda:0"),
             ("no baseline", f"--fixture {machine}", 0, None)]
    for name, options, status, drained in cases:
        calls.unlink(missing_ok=True)
        case_env = dict(env, HWACCEL_CHECK_OPTIONS=options)
        if name == "no baseline":
            case_env["HWACCEL_BASELINE"] = str(work / "absent.json")
        result = run(["sh", script], env=case_env)
        said = calls.read_text() if calls.exists() else None
        if result.returncode != status or (drained is None) != (said is None) or (drained and not said.startswith(drained)):
            failures.append(f"health check, {name}: exit {result.returncode}, scontrol {said!r}; {result.stderr}")
        else:
            print(f"health check, {name}: exit {status}" + (f", drained: {said.strip()[:90]}..." if said else ""))
    return failures


def main() -> int:
    hwaccel, fixtures = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
    healthcheck = os.path.abspath(sys.argv[3])
    if not shutil.which("slurmd"):
        print("slurmd is needed (apt install slurmd)")
        return 1
    if os.geteuid() != 0:
        print("SKIP: slurmd -G runs in a private mount namespace with device nodes, which needs root")
        return 77
    failures = []
    work = pathlib.Path(tempfile.mkdtemp(prefix="hwaccel-slurm-"))
    try:
        for machine in MACHINES:
            node = "node-" + machine[:20].strip("-")
            base = [hwaccel, "export", "slurm", "--fixture", str(fixtures / "machines" / machine), "--host", node]
            gres, line = run(base), run(base + ["--node-line"])
            if gres.returncode or line.returncode:
                failures.append(f"{machine}: export exited {gres.returncode}/{line.returncode}: {gres.stderr}")
                continue
            node_line = next(l for l in line.stdout.splitlines() if l.startswith("NodeName="))
            parsed = slurmd_parse(work, node, node_line, gres.stdout)
            problems = [l for l in parsed.stderr.splitlines() if re.search(r"error:|fatal:|warning:", l, re.I)]
            got, want = parsed_gres(parsed.stderr), expected_gres(gres.stdout)
            if parsed.returncode != 0 or problems:
                failures.append(f"{machine}: slurmd -G exited {parsed.returncode}: {problems or parsed.stderr[-800:]}")
            elif not want:
                failures.append(f"{machine}: no GPU in the generated gres.conf")
            elif got != want:
                failures.append(f"{machine}: slurmd read\n  {got}\nfrom\n  {want}")
            else:
                print(f"{machine}: slurmd -G reads {len(got)} GPU(s) as generated")

        # A broken gres.conf must not pass: cores the node does not have.
        dgx = run([hwaccel, "export", "slurm", "--fixture", str(fixtures / "machines" / MACHINES[0]), "--host", "n1"])
        line = run([hwaccel, "export", "slurm", "--fixture", str(fixtures / "machines" / MACHINES[0]), "--host", "n1",
                    "--node-line"])
        node_line = next(l for l in line.stdout.splitlines() if l.startswith("NodeName="))
        broken = dgx.stdout.replace("Cores=0-55", "Cores=0-9999", 1)
        parsed = slurmd_parse(work, "n1", node_line, broken)
        if parsed.returncode == 0 and not re.search(r"error|fatal", parsed.stderr, re.I):
            failures.append(f"a gres.conf with Cores=0-9999 passed slurmd -G silently: {parsed.stderr[-400:]}")
        else:
            print("broken gres.conf: slurmd complains, as it should")

        # This machine: the NodeName line against slurmd's own view of it.
        ours = run([hwaccel, "export", "slurm", "--node-line", "--host", "probe"])
        theirs = run(["slurmd", "-C"])
        fields = lambda text, prefix: dict(kv.split("=", 1) for kv in
                                           next(l for l in text.splitlines() if l.startswith(prefix)).split()[1:])
        a, b = fields(ours.stdout, "NodeName="), fields(theirs.stdout, "NodeName=")
        for key in ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory"):
            if a.get(key) != b.get(key):
                failures.append(f"this machine: {key}={a.get(key)}, slurmd -C says {b.get(key)}")
        print(f"this machine: {ours.stdout.splitlines()[-1]}")
        print(f"slurmd -C:    {theirs.stdout.splitlines()[0]}")

        failures += check_healthcheck(hwaccel, healthcheck, fixtures / "machines" / MACHINES[0], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f)
    print("Slurm exports: " + ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
