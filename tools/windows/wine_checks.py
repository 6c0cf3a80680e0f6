#!/usr/bin/env python3
"""The checks of wine_test.sh, run inside its xvfb-run with its Wine prefix.

wine_checks.py WORK: WORK holds hwaccel.exe and tools/hang-smi.bat.
"""
import json
import os
import subprocess
import sys
import time

VIDEO_MEMORY_MIB = 8192
VENDOR_ID = 0x10DE
DEVICE_ID = 0x1E87  # GeForce RTX 2080, a card in Wine's own table (others are ignored)

work = sys.argv[1]
exe = os.path.join(work, "hwaccel.exe")
failures = []


def wine(*args, env=None, timeout=120):
    return subprocess.run(["wine", *args], capture_output=True, text=True, timeout=timeout, env=env)


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


def reg_add(name, kind, value):
    r = wine("reg", "add", r"HKCU\Software\Wine\Direct3D", "/v", name, "/t", kind, "/d", value, "/f")
    if r.returncode != 0:
        sys.exit(f"reg add {name} failed: {r.stderr}")


wine("wineboot", "-i", timeout=300)
reg_add("VideoMemorySize", "REG_SZ", str(VIDEO_MEMORY_MIB))
reg_add("VideoPciVendorID", "REG_DWORD", hex(VENDOR_ID))
reg_add("VideoPciDeviceID", "REG_DWORD", hex(DEVICE_ID))

# 1. The adapter, exactly as Wine was told to report it.
r = wine(exe, "detect", "--json", "--no-timings")
check(r.returncode == 0, f"hwaccel.exe detect exits 0 (got {r.returncode}; stderr: {r.stderr.strip()[:400]})")
registry = json.loads(r.stdout) if r.returncode == 0 else {"devices": []}
gpus = [d for d in registry["devices"] if d["backend"] == "dxgi"]
check(len(gpus) == 1, f"one DXGI adapter (got {[d['name'] for d in gpus]})")
if gpus:
    gpu = gpus[0]
    check(gpu["memory_bytes"] == VIDEO_MEMORY_MIB << 20, f"memory_bytes {gpu['memory_bytes']} == {VIDEO_MEMORY_MIB} MiB")
    check(gpu["properties"].get("pci_id") == f"{VENDOR_ID:04x}:{DEVICE_ID:04x}", f"pci_id {gpu['properties'].get('pci_id')}")
    check(gpu.get("vendor") == "NVIDIA", f"vendor {gpu.get('vendor')}")
    check("RTX 2080" in gpu["name"], f"name {gpu['name']!r} names the card")
    check(gpu.get("spec_id") is not None, f"matched to the spec table ({gpu.get('spec_id')})")
    check(gpu["family"] == "gpu" and not gpu["integrated"], "a discrete GPU")

# 2. A plan on it, by its memory: the shard on dxgi:0 is bounded by that
#    memory less the planner's 10 % reserve.
r = wine(exe, "plan", "--model", "llama-3.1-8b", "--json")
check(r.returncode == 0, f"hwaccel.exe plan exits 0 (got {r.returncode}; stderr: {r.stderr.strip()[:400]})")
if r.returncode == 0:
    plan = json.loads(r.stdout)
    check(plan.get("fits") is True, f"fits: {plan.get('fits')}")
    shards = [s for s in plan.get("shards", []) if s["device"] == "dxgi:0"]
    check(len(shards) == 1, f"one shard on dxgi:0 (shards on {[s['device'] for s in plan.get('shards', [])]})")
    if shards:
        expected = (VIDEO_MEMORY_MIB << 20) * (1 - plan["reserve_fraction"])
        check(abs(shards[0]["capacity_bytes"] - expected) <= 1,
              f"shard capacity {shards[0]['capacity_bytes']} is the adapter's memory less the reserve ({expected:.0f})")
        check(shards[0]["total_bytes"] <= shards[0]["capacity_bytes"], "the shard fits its capacity")
    check(plan["throughput"]["runtime"] == "llama.cpp-vulkan", f"runtime {plan['throughput']['runtime']}")

# Training plans and the doctor run as on Linux.
r = wine(exe, "train", "--model", "llama-3.1-8b", "--method", "qlora")
check(r.returncode == 0 and json.loads(r.stdout or "{}").get("backend") == "dxgi",
      f"hwaccel.exe train plans on the adapter (exit {r.returncode}; stderr: {r.stderr.strip()[:300]})")
r = wine(exe, "doctor")
check(r.returncode == 0 and "dxgi: looked at 1 path(s), found 1 device(s)" in r.stdout,
      f"hwaccel.exe doctor reports the adapter (exit {r.returncode}: {r.stdout.strip()[:300]})")

# 3. A tool that hangs (nvidia-smi found as a .bat through PATHEXT, as the
#    NVIDIA adapter makes it worth looking for) is ended at the deadline, its
#    whole tree with it.
tools_dir = os.path.join(work, "tools")
os.rename(os.path.join(tools_dir, "hang-smi.bat"), os.path.join(tools_dir, "nvidia-smi.bat"))
env = dict(os.environ, WINEPATH="Z:" + tools_dir.replace("/", "\\"))
started = time.monotonic()
r = wine(exe, "detect", "--json", "--no-timings", "--timeout-ms", "2000", env=env, timeout=300)
took = time.monotonic() - started
check(r.returncode == 0, f"detect with a hanging nvidia-smi exits 0 (got {r.returncode}; stderr: {r.stderr.strip()[:400]})")
check(took < 60, f"detect returned in {took:.1f} s, not after the tool's 600 s")
if r.returncode == 0:
    warnings = json.loads(r.stdout).get("warnings", [])
    timeouts = [w for w in warnings if w.get("kind") == "timeout" and "nvidia-smi" in w.get("message", "")]
    check(bool(timeouts), f"a timeout warning names nvidia-smi (warnings: {[w.get('message') for w in warnings]})")
time.sleep(1)
left = subprocess.run(["pgrep", "-f", "ping.exe"], capture_output=True, text=True).stdout.split()
check(not left, f"no ping.exe of the hanging tool is left running ({left})")

# 4. A fixture replays on Windows as on Linux: the same registry as its expected.json.
r = wine(exe, "detect", "--fixture", "Z:" + os.path.join(work, "fixture").replace("/", "\\"), "--json", "--no-timings")
check(r.returncode == 0, f"detect --fixture exits 0 (got {r.returncode}; stderr: {r.stderr.strip()[:400]})")
if r.returncode == 0:
    replayed = json.loads(r.stdout)
    with open(os.path.join(work, "fixture", "expected.json")) as f:
        expected = json.load(f)
    check(replayed["devices"] == expected["devices"],
          f"the replayed devices are expected.json's ({[d['id'] for d in replayed['devices']]})")

# 5. `hwaccel capture` records the Windows documents like any other read, and
#    the capture replays to what was detected (on Windows here; on Linux in
#    the fixture tests' Windows machines).
capture = os.path.join(work, "capture")
r = wine(exe, "capture", "--out", "Z:" + capture.replace("/", "\\"))
check(r.returncode == 0, f"hwaccel.exe capture exits 0 (got {r.returncode}; stderr: {r.stderr.strip()[:400]})")
adapters_file = os.path.join(capture, "root", "windows", "dxgi", "adapters.json")
system_file = os.path.join(capture, "root", "windows", "system.json")
check(os.path.isfile(adapters_file) and os.path.isfile(system_file), "the capture holds root/windows/dxgi/adapters.json and root/windows/system.json")
if os.path.isfile(system_file):
    with open(system_file) as f:
        facts = json.load(f)
    check(facts.get("processor_name") and facts.get("memory_bytes", 0) > 0 and facts.get("logical_processors", 0) > 0,
          f"system.json names the processor, its memory and processors ({facts.get('processor_name')}, {facts.get('memory_bytes')})")
if r.returncode == 0:
    r = wine(exe, "detect", "--fixture", "Z:" + capture.replace("/", "\\"), "--json", "--no-timings")
    check(r.returncode == 0, "the capture replays")
    if r.returncode == 0:
        with open(os.path.join(capture, "expected.json")) as f:
            captured = json.load(f)
        replayed = json.loads(r.stdout)
        check([d["id"] for d in replayed["devices"]] == [d["id"] for d in captured["devices"]] and
              any(d["id"] == "dxgi:0" and d["memory_bytes"] == VIDEO_MEMORY_MIB << 20 for d in replayed["devices"]),
              f"the replay has the captured devices ({[d['id'] for d in replayed['devices']]})")

print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
