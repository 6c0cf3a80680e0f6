#!/usr/bin/env python3
"""Plans over several nodes, launch hints, capacity and placement, through the CLI.

usage: plan_multinode.py HWACCEL FIXTURES_DIR

- `hwaccel plan --devices "2x(8xH100-SXM-80GB)" --model llama-3.1-405b --quant bf16`:
  tensor parallel 8 x pipeline parallel 2 over node0 and node1, every shard within
  its device, stage 0 on node0 and stage 1 on node1; `--nodes 2` plans the same.
- Launch hints: the LeaderWorkerSet manifest parses as YAML and asks for 2 pods of
  8 GPUs running `vllm serve` (TP 8, PP 2) and a worker joining the leader; the
  sbatch script passes `bash -n`; every one-line hint splits as a shell line and
  starts with its program; `--launch NAME` prints the JSON's hint alone.
- A fleet of two scans of the dgx-h100-8x-nvswitch fixture (hosts gpu-a, gpu-b):
  the hints name the hosts, `--busy` keeps a device out of the shards,
  `--what-is-missing` counts needed, free and missing nodes.
- `hwaccel place`: replicas of 70B and 8B on that fleet, each on one host, no
  device twice; its --json fed back as --busy; 3 x 405B leaves replicas unplaced.
- Bad input: exit 2 for bad usage, 1 for what cannot be read or planned (a
  runtime-profile file without every runtime, given to `place`, included).
"""
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import time

import yaml

if len(sys.argv) != 3:
    sys.exit("usage: plan_multinode.py HWACCEL FIXTURES_DIR")
hwaccel, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
dgx = fixtures / "machines" / "dgx-h100-8x-nvswitch"
TIMEOUT_S = 60
PLAN_405B = ["plan", "--model", "llama-3.1-405b", "--quant", "bf16"]
TWO_NODES = ["--devices", "2x(8xH100-SXM-80GB)"]

env = {k: v for k, v in os.environ.items() if k not in ("HWACCEL_LOG", "HWACCEL_BACKENDS")}
env["NO_COLOR"] = "1"
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)
    return cond


def run(args, stdin=None):
    try:
        return subprocess.run([hwaccel, *map(str, args)], capture_output=True, text=True, env=env,
                              input=stdin, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        failures.append(f"hwaccel {shlex.join(map(str, args))}: no answer within {TIMEOUT_S} s")
        raise SystemExit(report())


def cmd(args):
    return "hwaccel " + shlex.join(map(str, args))


def expect_rc(args, rc, stdin=None):
    p = run(args, stdin)
    check(p.returncode == rc, f"{cmd(args)}: exit {p.returncode}, expected {rc}; stderr: {p.stderr.strip()[:500]}")
    return p


def json_of(args, rc=0):
    p = expect_rc(args, rc)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        failures.append(f"{cmd(args)}: stdout is not JSON ({e}): {p.stdout[:300]!r}")
        raise SystemExit(report())


def report():
    if failures:
        print(f"\n{len(failures)} of {checks} checks failed", file=sys.stderr)
        return 1
    return 0


def shell_words(line, what):
    """A one-line hint as argv: a trailing `  # comment` dropped, then shlex."""
    line = re.sub(r"\s{2,}#.*$", "", line)
    try:
        return shlex.split(line)
    except ValueError as e:
        check(False, f"{what}: not a shell line ({e}): {line!r}")
        return []


def option(words, name):
    """The value after `name` (or of `name=value`) in words; None when absent."""
    for i, w in enumerate(words):
        if w == name and i + 1 < len(words):
            return words[i + 1]
        if w.startswith(name + "="):
            return w[len(name) + 1:]
    return None


def shard_keys(plan):
    return [(s.get("node"), s["device"]) for s in plan["shards"]]


# --- 1. the 2-node plan of 405B at BF16 ------------------------------------------
def check_two_node_plan():
    args = [*PLAN_405B, *TWO_NODES, "--json"]
    plan = json_of(args)
    st = plan["strategy"]
    check((st.get("tp"), st.get("pp"), st.get("nodes")) == (8, 2, 2),
          f"{cmd(args)}: strategy tp/pp/nodes {st.get('tp')}/{st.get('pp')}/{st.get('nodes')}, expected 8/2/2 ({st})")
    check("ep" in st, f"{cmd(args)}: strategy has no 'ep': {st}")
    check(plan.get("nodes") == ["node0", "node1"], f"{cmd(args)}: nodes {plan.get('nodes')}, expected ['node0', 'node1']")
    check(plan.get("fabric", "absent") is None, f"{cmd(args)}: fabric {plan.get('fabric', 'absent')!r} without --fabric, expected null")
    check(plan.get("fits") is True, f"{cmd(args)}: fits is {plan.get('fits')}")
    shards = plan["shards"]
    check(len(shards) == 16, f"{cmd(args)}: {len(shards)} shards, expected 16")
    check(len(set(shard_keys(plan))) == len(shards), f"{cmd(args)}: a device holds two shards: {shard_keys(plan)}")
    for s in shards:
        where = f"{s.get('node')}/{s.get('device')}"
        check(s["total_bytes"] <= s["capacity_bytes"],
              f"{cmd(args)}: shard {where} needs {s['total_bytes']} bytes > capacity {s['capacity_bytes']}")
        want = {0: "node0", 1: "node1"}.get(s["stage"])
        check(s.get("node") == want, f"{cmd(args)}: shard {where} of stage {s['stage']} is on {s.get('node')}, expected {want}")
        check(s.get("cpu_offload") is False, f"{cmd(args)}: shard {where} is offloaded to the CPU")
    check(sorted(s["tp_rank"] for s in shards if s["stage"] == 0) == list(range(8)),
          f"{cmd(args)}: stage 0's tp ranks are {sorted(s['tp_rank'] for s in shards if s['stage'] == 0)}")
    # --nodes 2 of one node's devices is the same plan.
    same = json_of([*PLAN_405B, "--devices", "8xH100-SXM-80GB", "--nodes", "2", "--json"])
    check(same == plan, f"{cmd([*PLAN_405B, '--devices', '8xH100-SXM-80GB', '--nodes', '2', '--json'])}: differs from the 2x(...) plan")
    # --fabric names the fabric between nodes.
    fab_args = [*PLAN_405B, *TWO_NODES, "--fabric", "ib-8x400g", "--json"]
    fab = json_of(fab_args).get("fabric") or {}
    check((fab.get("kind"), fab.get("ports_per_node"), fab.get("port_gbps")) == ("infiniband", 8, 400),
          f"{cmd(fab_args)}: fabric {fab}, expected infiniband, 8 ports of 400 Gb/s")
    return plan


# --- 2-4. launch hints ----------------------------------------------------------------
def launch(name, base, rc=0):
    return expect_rc([*base, "--launch", name], rc)


def check_kubernetes(base, launch_json):
    p = launch("kubernetes", base)
    what = cmd([*base, "--launch", "kubernetes"])
    check(p.stdout.rstrip("\n") == launch_json["kubernetes"].rstrip("\n"), f"{what}: differs from the JSON's launch.kubernetes")
    try:
        doc = yaml.safe_load(p.stdout)
    except yaml.YAMLError as e:
        check(False, f"{what}: not YAML: {e}")
        return
    if not check(isinstance(doc, dict), f"{what}: YAML document is {type(doc).__name__}, expected a mapping"):
        return
    check(doc.get("apiVersion") == "leaderworkerset.x-k8s.io/v1", f"{what}: apiVersion {doc.get('apiVersion')!r}")
    check(doc.get("kind") == "LeaderWorkerSet", f"{what}: kind {doc.get('kind')!r}")
    lwt = (doc.get("spec") or {}).get("leaderWorkerTemplate") or {}
    check(lwt.get("size") == 2, f"{what}: spec.leaderWorkerTemplate.size {lwt.get('size')!r}, expected 2")
    roles = {}
    for role in ("leaderTemplate", "workerTemplate"):
        containers = ((lwt.get(role) or {}).get("spec") or {}).get("containers") or []
        if not check(len(containers) == 1, f"{what}: {role} has {len(containers)} containers, expected 1"):
            continue
        c = containers[0]
        gpus = ((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu")
        check(gpus == "8", f"{what}: {role} container asks for nvidia.com/gpu {gpus!r}, expected \"8\"")
        command = c.get("command") or []
        check(isinstance(command, list) and all(isinstance(x, str) for x in command),
              f"{what}: {role} command is not a list of strings: {command!r}")
        roles[role] = " ".join(command) if isinstance(command, list) else str(command)
    # The leader's shell line: some `;`/`&&` segment is `vllm serve ... --tensor-parallel-size 8 --pipeline-parallel-size 2`.
    leader = roles.get("leaderTemplate", "")
    serve = None
    for segment in re.split(r";|&&", leader.split(" -c ", 1)[-1]):
        words = shell_words(segment.strip(), f"{what}: leader command segment")
        if words[:2] == ["vllm", "serve"]:
            serve = words
    if check(serve is not None, f"{what}: the leader's command runs no `vllm serve`: {leader!r}"):
        check(option(serve, "--tensor-parallel-size") == "8", f"{what}: leader's vllm serve has --tensor-parallel-size {option(serve, '--tensor-parallel-size')}")
        check(option(serve, "--pipeline-parallel-size") == "2", f"{what}: leader's vllm serve has --pipeline-parallel-size {option(serve, '--pipeline-parallel-size')}")
    check("$(LWS_LEADER_ADDRESS)" in roles.get("workerTemplate", ""),
          f"{what}: the worker does not join $(LWS_LEADER_ADDRESS): {roles.get('workerTemplate')!r}")


def check_slurm(base, launch_json, nodelist=None):
    p = launch("slurm", base)
    what = cmd([*base, "--launch", "slurm"])
    script = p.stdout
    check(script.rstrip("\n") == launch_json["slurm"].rstrip("\n"), f"{what}: differs from the JSON's launch.slurm")
    check(script.startswith("#!/bin/bash\n"), f"{what}: does not start with #!/bin/bash: {script[:40]!r}")
    try:
        b = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=TIMEOUT_S)
        check(b.returncode == 0, f"{what}: bash -n rejects the script: {b.stderr.strip()}")
    except subprocess.TimeoutExpired:
        check(False, f"{what}: bash -n took more than {TIMEOUT_S} s")
    directives = [l for l in script.splitlines() if l.startswith("#SBATCH ")]
    for d in ("#SBATCH --nodes=2", "#SBATCH --gpus-per-node=8"):
        check(d in directives, f"{what}: no `{d}` line among {directives}")
    if nodelist:
        check(f"#SBATCH --nodelist={nodelist}" in directives, f"{what}: no `#SBATCH --nodelist={nodelist}` among {directives}")
    check("vllm serve" in script, f"{what}: no `vllm serve` in the script")


EXPECTED_PROGRAM = {
    "vllm": ["vllm", "serve"],
    "sglang": ["python3", "-m", "sglang.launch_server"],
    "trtllm": ["mpirun"],
    "torchrun": ["torchrun"],
}


def check_one_line_hints(base, launch_json):
    """Returns the argv of each hint (ray: a list of them)."""
    words = {}
    for name, program in EXPECTED_PROGRAM.items():
        what = cmd([*base, "--launch", name])
        line = launch_json.get(name)
        if not check(isinstance(line, str), f"{cmd(base)} --json: launch.{name} is {line!r}, expected a string"):
            continue
        check("\n" not in line, f"{what}: more than one line: {line!r}")
        p = launch(name, base)
        check(p.stdout == line + "\n", f"{what}: prints {p.stdout!r}, expected the JSON's launch.{name} and a newline")
        w = shell_words(line, what)
        check(w[:len(program)] == program, f"{what}: starts with {w[:len(program)]}, expected {program}: {line!r}")
        words[name] = w
    ray = launch_json.get("ray")
    what = cmd([*base, "--launch", "ray"])
    if check(isinstance(ray, list) and len(ray) == 2 and all(isinstance(l, str) for l in ray),
             f"{cmd(base)} --json: launch.ray is {ray!r}, expected 2 lines (head and one worker)"):
        p = launch("ray", base)
        check(p.stdout == "".join(l + "\n" for l in ray), f"{what}: prints {p.stdout!r}, expected the JSON's ray lines")
        words["ray"] = [shell_words(l, what) for l in ray]
        for w in words["ray"]:
            check(w[:2] == ["ray", "start"], f"{what}: a line starts with {w[:2]}, expected ['ray', 'start']")
        check("--head" in words["ray"][0], f"{what}: the first line is not the head's: {ray[0]!r}")
        check(option(words["ray"][1], "--address") is not None, f"{what}: the second line has no --address: {ray[1]!r}")
    if "sglang" in words:
        check(option(words["sglang"], "--nnodes") == "2", f"{cmd([*base, '--launch', 'sglang'])}: --nnodes {option(words['sglang'], '--nnodes')}, expected 2")
    if "torchrun" in words:
        w = words["torchrun"]
        check((option(w, "--nnodes"), option(w, "--nproc-per-node")) == ("2", "8"),
              f"{cmd([*base, '--launch', 'torchrun'])}: --nnodes {option(w, '--nnodes')} --nproc-per-node {option(w, '--nproc-per-node')}, expected 2 and 8")
    if "trtllm" in words:
        w = words["trtllm"]
        check(option(w, "-np") == "16", f"{cmd([*base, '--launch', 'trtllm'])}: mpirun -np {option(w, '-np')}, expected 16")
        check("trtllm-serve" in w, f"{cmd([*base, '--launch', 'trtllm'])}: no trtllm-serve in {w}")
    if "vllm" in words:
        w = words["vllm"]
        check((option(w, "--tensor-parallel-size"), option(w, "--pipeline-parallel-size")) == ("8", "2"),
              f"{cmd([*base, '--launch', 'vllm'])}: TP {option(w, '--tensor-parallel-size')} PP {option(w, '--pipeline-parallel-size')}, expected 8 and 2")
    return words


def check_launch_hints(plan):
    base = [*PLAN_405B, *TWO_NODES]
    launch_json = plan.get("launch") or {}
    for key in ("vllm", "sglang", "trtllm", "torchrun", "ray", "slurm", "kubernetes"):
        check(key in launch_json, f"{cmd(base)} --json: launch has no {key!r} (keys: {sorted(launch_json)})")
    check_kubernetes(base, launch_json)
    check_slurm(base, launch_json)
    check_one_line_hints(base, launch_json)


# --- 5. a fleet of two scans -----------------------------------------------------------
def make_fleet(tmp):
    registries = []
    for host in ("gpu-a", "gpu-b"):
        args = ["detect", "--fixture", dgx, "--host", host, "--no-timings"]
        p = expect_rc(args, 0)
        path = tmp / f"{host}.json"
        path.write_text(p.stdout)
        registries.append(path)
    p = expect_rc(["fleet", "scan", *registries], 0)
    fleet = tmp / "fleet.json"
    fleet.write_text(p.stdout)
    doc = json.loads(p.stdout)
    hosts = [n.get("host") for n in doc.get("nodes", [])]
    if not check(hosts == ["gpu-a", "gpu-b"], f"hwaccel fleet scan gpu-a.json gpu-b.json: hosts {hosts}, expected gpu-a, gpu-b"):
        raise SystemExit(report())
    return fleet


def check_fleet_plans(fleet):
    base = [*PLAN_405B, "--fleet", fleet]
    args = [*base, "--json"]
    plan = json_of(args)
    st = plan["strategy"]
    check((st.get("tp"), st.get("pp"), st.get("nodes")) == (8, 2, 2), f"{cmd(args)}: strategy {st}, expected tp 8, pp 2, 2 nodes")
    check(plan.get("nodes") == ["gpu-a", "gpu-b"], f"{cmd(args)}: nodes {plan.get('nodes')}, expected ['gpu-a', 'gpu-b']")
    check({s.get("node") for s in plan["shards"]} == {"gpu-a", "gpu-b"}, f"{cmd(args)}: shards on {sorted({str(s.get('node')) for s in plan['shards']})}")
    launch_json = plan.get("launch") or {}
    words = check_one_line_hints(base, launch_json)
    ray = words.get("ray") or []
    if len(ray) == 2:
        check(option(ray[1], "--address") == "gpu-a:6379", f"{cmd(base)} --launch ray: worker joins {option(ray[1], '--address')}, expected gpu-a:6379")
    trt = words.get("trtllm") or []
    check(option(trt, "-H") == "gpu-a:8,gpu-b:8", f"{cmd(base)} --launch trtllm: mpirun -H {option(trt, '-H')}, expected gpu-a:8,gpu-b:8")
    check_slurm(base, launch_json, nodelist="gpu-a,gpu-b")

    # A busy device stays out of the shards; the plan still fits on what is left.
    busy_args = [*base, "--busy", "gpu-b/cuda:0", "--json"]
    busy = json_of(busy_args)
    keys = shard_keys(busy)
    check(("gpu-b", "cuda:0") not in keys, f"{cmd(busy_args)}: gpu-b/cuda:0 holds a shard: {keys}")
    check(len(set(keys)) == len(keys), f"{cmd(busy_args)}: a device holds two shards: {keys}")
    check(busy.get("fits") is True, f"{cmd(busy_args)}: fits is {busy.get('fits')}")
    for s in busy["shards"]:
        check(s["total_bytes"] <= s["capacity_bytes"], f"{cmd(busy_args)}: shard {s.get('node')}/{s['device']} over its capacity")
        check(s.get("node") in ("gpu-a", "gpu-b"), f"{cmd(busy_args)}: shard on unknown node {s.get('node')!r}")


def check_what_is_missing(fleet):
    base = [*PLAN_405B, "--what-is-missing", "--fleet", fleet]
    first = json_of([*base, "--json"])
    keys = {"model", "node_kind", "nodes_needed", "nodes_of_kind", "nodes_free", "nodes_missing", "summary", "plan"}
    check(keys <= set(first), f"{cmd([*base, '--json'])}: keys {sorted(first)} lack {sorted(keys - set(first))}")
    kind = first.get("node_kind")
    check(kind == "8xH100-SXM-80GB", f"{cmd([*base, '--json'])}: the fleet's kind is {kind!r}, expected 8xH100-SXM-80GB")
    if not kind:
        return
    for busy, free, missing in ((None, 2, 0), ("gpu-b", 1, 1)):
        args = [*base, "--node-kind", kind, *(["--busy", busy] if busy else []), "--json"]
        r = json_of(args)
        got = (r.get("model"), r.get("node_kind"), r.get("nodes_needed"), r.get("nodes_of_kind"), r.get("nodes_free"), r.get("nodes_missing"))
        want = ("llama-3.1-405b", kind, 2, 2, free, missing)
        check(got == want, f"{cmd(args)}: model, node_kind, needed, of kind, free, missing = {got}, expected {want}")
        summary = r.get("summary") or ""
        tail = "nothing missing" if missing == 0 else f"{missing} missing"
        check(f"needs 2 nodes of {kind}" in summary and summary.endswith(tail) and f"{free} free (2 in all)" in summary,
              f"{cmd(args)}: summary {summary!r}")
        plan = r.get("plan") or {}
        check((plan.get("strategy") or {}).get("nodes") == 2 and (plan.get("strategy") or {}).get("cpu_offload_layers") == 0,
              f"{cmd(args)}: the plan's strategy is {plan.get('strategy')}, expected 2 nodes and no CPU offload")
        human_args = [*args[:-1], "--human"]
        h = expect_rc(human_args, 0)
        check(h.stdout.strip() == summary, f"{cmd(human_args)}: prints {h.stdout.strip()!r}, expected the JSON's summary")


# --- 6. hwaccel place --------------------------------------------------------------------
def check_placement(doc, what, workloads, fleet_devices):
    """Every replica placed once, on one host, no device twice; returns the devices."""
    used = []
    check(doc.get("unplaced") == [], f"{what}: unplaced {doc.get('unplaced')}")
    placed = doc.get("placed") or []
    got = sorted((p.get("workload"), p.get("replica")) for p in placed)
    want = sorted((w["name"], i) for w in workloads for i in range(w["replicas"]))
    check(got == want, f"{what}: placed replicas {got}, expected {want}")
    for p in placed:
        tag = f"{what}: {p.get('workload')} replica {p.get('replica')}"
        devices = p.get("devices") or []
        hosts = {d.split("/", 1)[0] for d in devices}
        check(len(hosts) == 1, f"{tag} spans hosts {sorted(hosts)}: {devices}")
        check(p.get("nodes") == sorted(hosts), f"{tag}: nodes {p.get('nodes')} but devices on {sorted(hosts)}")
        check(len(devices) == p.get("tp", 0) * p.get("pp", 0), f"{tag}: {len(devices)} devices for tp {p.get('tp')} x pp {p.get('pp')}")
        check(set(devices) <= fleet_devices, f"{tag}: devices not in the fleet: {sorted(set(devices) - fleet_devices)}")
        check(p.get("quantization") == "bf16", f"{tag}: quantization {p.get('quantization')!r}, expected bf16")
        check(0 < p.get("bytes_per_device", 0) <= 80 * 1000**3, f"{tag}: bytes_per_device {p.get('bytes_per_device')}")
        used += devices
    dupes = sorted({d for d in used if used.count(d) > 1})
    check(not dupes, f"{what}: devices used twice: {dupes}")
    check(doc.get("nodes_used", 0) >= doc.get("lower_bound", 0) >= 1,
          f"{what}: nodes_used {doc.get('nodes_used')} lower_bound {doc.get('lower_bound')}")
    for key in ("ratio", "method", "search_complete", "notes"):
        check(key in doc, f"{what}: no {key!r} in the output")
    return set(used)


def check_place(fleet, tmp):
    fleet_devices = {f"{h}/cuda:{i}" for h in ("gpu-a", "gpu-b") for i in range(8)}
    workloads = [
        {"name": "chat70", "model": "llama-3.1-70b", "replicas": 3, "quantization": "bf16", "context": 4096, "batch": 1},
        {"name": "small8", "model": "llama-3.1-8b", "replicas": 2, "quantization": "bf16"},
    ]
    wfile = tmp / "workloads.json"
    wfile.write_text(json.dumps({"workloads": workloads}))
    args = ["place", "--fleet", fleet, "--workloads", wfile, "--json"]
    p = expect_rc(args, 0)
    first = json.loads(p.stdout)
    used = check_placement(first, cmd(args), workloads, fleet_devices)
    tp70 = {x.get("tp") for x in first.get("placed", []) if x.get("workload") == "chat70"}
    check(tp70 == {2}, f"{cmd(args)}: 70B at BF16 placed with tp {tp70}, expected 2 (two H100s per replica)")

    # Its output as --busy: the same workloads again, on none of those devices.
    placed_file = tmp / "placed.json"
    placed_file.write_text(p.stdout)
    again_args = ["place", "--fleet", fleet, "--workloads", wfile, "--busy", placed_file, "--json"]
    again = json_of(again_args)
    used_again = check_placement(again, cmd(again_args), workloads, fleet_devices)
    check(not (used & used_again), f"{cmd(again_args)}: reuses busy devices {sorted(used & used_again)}")

    # 3 x 405B at BF16 on 16 H100s: at most one replica fits.
    big = [{"name": "big", "model": "llama-3.1-405b", "replicas": 3, "quantization": "bf16"}]
    bfile = tmp / "big.json"
    bfile.write_text(json.dumps({"workloads": big}))
    big_args = ["place", "--fleet", fleet, "--workloads", bfile, "--json"]
    doc = json_of(big_args, rc=3)
    unplaced = doc.get("unplaced") or []
    placed = doc.get("placed") or []
    check(len(placed) + len(unplaced) == 3, f"{cmd(big_args)}: {len(placed)} placed + {len(unplaced)} unplaced, expected 3 replicas")
    check(len(unplaced) >= 2, f"{cmd(big_args)}: {len(unplaced)} unplaced, expected at least 2")
    for u in unplaced:
        check(u.get("workload") == "big" and isinstance(u.get("reason"), str) and u["reason"].strip(),
              f"{cmd(big_args)}: unplaced entry without a reason: {u}")
    for x in placed:
        check(len(x.get("devices", [])) == 16 and x.get("tp", 0) * x.get("pp", 0) == 16,
              f"{cmd(big_args)}: a placed 405B replica has {len(x.get('devices', []))} devices, tp {x.get('tp')} pp {x.get('pp')}")


# --- 7. bad input ------------------------------------------------------------------------
def check_bad_input(fleet, tmp):
    p = expect_rc([*PLAN_405B, *TWO_NODES, "--fabric", "ib-0g"], 2)
    check("--fabric" in p.stderr, f"--fabric ib-0g: stderr does not name --fabric: {p.stderr.strip()!r}")

    wfile = tmp / "unknown-key.json"
    wfile.write_text(json.dumps({"workloads": [{"name": "x", "model": "llama-3.1-8b", "replicas": 1, "colour": "red"}]}))
    p = expect_rc(["place", "--fleet", fleet, "--workloads", wfile, "--json"], 2)
    check("colour" in p.stderr, f"place, a workload with an unknown key: stderr does not name it: {p.stderr.strip()!r}")

    # place reads --runtime-profiles with the planner's reader: a file without every runtime is refused.
    profiles = tmp / "no-runtimes.json"
    profiles.write_text(json.dumps({"format": "hwaccel-runtime-profiles", "version": 1, "profiles": []}))
    good = tmp / "one-workload.json"
    good.write_text(json.dumps({"workloads": [{"name": "x", "model": "llama-3.1-8b", "replicas": 1}]}))
    args = ["place", "--fleet", fleet, "--workloads", good, "--runtime-profiles", profiles, "--json"]
    p = expect_rc(args, 1)
    check("runtime-profiles: " in p.stderr and "has no entry for runtime" in p.stderr,
          f"{cmd(args)}: stderr does not give the profile reader's error: {p.stderr.strip()!r}")

    args = [*PLAN_405B, *TWO_NODES, "--launch", "llama-cpp"]
    p = expect_rc(args, 1)
    check(p.stderr.strip() != "", f"{cmd(args)}: no message on stderr")
    check(p.stdout == "", f"{cmd(args)}: prints {p.stdout!r} on stdout")

    p = expect_rc([*PLAN_405B, "--devices", "2x(8xH100-SXM-80GB"], 2)
    check(p.stderr.strip() != "", "--devices '2x(8xH100-SXM-80GB': no message on stderr")

    bad = tmp / "not-json.json"
    bad.write_text("this is { not JSON\n")
    p = expect_rc([*PLAN_405B, "--fleet", bad], 1)
    check(p.stderr.strip() != "", "--fleet of a file that is not JSON: no message on stderr")


def main():
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hwaccel-plan-multinode-") as t:
        tmp = pathlib.Path(t)
        plan = check_two_node_plan()
        check_launch_hints(plan)
        fleet = make_fleet(tmp)
        check_fleet_plans(fleet)
        check_what_is_missing(fleet)
        check_place(fleet, tmp)
        check_bad_input(fleet, tmp)
    rc = report()
    if rc == 0:
        print(f"ok: {checks} checks in {time.monotonic() - start:.2f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
