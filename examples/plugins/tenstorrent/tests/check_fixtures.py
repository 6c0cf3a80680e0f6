#!/usr/bin/env python3
"""Replays the plugin's fixtures through an installed `hwaccel` with this
build's plugin on HWACCEL_PLUGIN_PATH, isolated and in process, and checks
what each machine must show (fixtures/SOURCE.md says why).

    check_fixtures.py HWACCEL PLUGIN_BUILD_DIR SOURCE_DIR
"""
import json
import os
import subprocess
import sys

hwaccel, plugin_dir, source = sys.argv[1], sys.argv[2], sys.argv[3]
fixtures = os.path.join(source, "fixtures")
env = dict(os.environ, HWACCEL_PLUGIN_PATH=plugin_dir)


def run(*args):
    done = subprocess.run([hwaccel, *args], env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        sys.exit(f"hwaccel {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def detect(fixture, *extra):
    return json.loads(run("detect", "--fixture", os.path.join(fixtures, fixture), "--no-timings", *extra))


def expect(condition, what):
    if not condition:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def plugin_devices(registry):
    return [d for d in registry["devices"] if d["backend"] == "plugin"]


listing = run("backends")
expect("tenstorrent (plugin " in listing and "tools: tt-smi" in listing, "hwaccel backends lists the plugin and its tool")

for mode in ([], ["--plugins-in-process"]):
    label = "in process" if mode else "isolated"
    r = detect("n300-and-p150a", *mode)
    devices = plugin_devices(r)
    expect([d["id"] for d in devices] == ["tenstorrent:0", "tenstorrent:1"], f"{label}: two cards, one per PCIe function")
    n300, p150 = devices
    expect(n300["name"] == "Tenstorrent Wormhole n300" and p150["name"] == "Tenstorrent Blackhole p150a", f"{label}: names")
    expect(n300["pci_bus_id"] == "0000:01:00.0" and p150["pci_bus_id"] == "0000:41:00.0", f"{label}: PCI bus ids")
    expect(n300["driver_version"] == "2.3.0" and n300["firmware_version"] == "18.6.0.0", f"{label}: driver and firmware")
    expect(n300["uuid"] == "00000140318A1022", f"{label}: the board serial as the uuid")
    expect(abs(n300["power_watts"] - 38.25) < 1e-9 and n300["power_limit_watts"] == 300, f"{label}: hwmon power")
    expect(abs(p150["temperature_c"] - 52.75) < 1e-9, f"{label}: hwmon temperature")
    link = {k: n300["pcie"].get(k) for k in ("current_speed_gts", "max_speed_gts", "current_width", "max_width")}
    expect(link == {"current_speed_gts": 16, "max_speed_gts": 16, "current_width": 16, "max_width": 16}
           and n300["pcie"]["current_generation"] == 4 and p150["pcie"]["current_generation"] == 5, f"{label}: the PCIe link")
    expect(n300["numa_node"] == 0 and p150["numa_node"] == 1, f"{label}: NUMA nodes")
    expect(not n300["visible"] and p150["visible"] and p150["runtime_index"] == 0, f"{label}: TT_VISIBLE_DEVICES=1")
    expect(n300["available"] and p150["available"], f"{label}: both available")
    expect(n300["properties"]["plugin"] == "tenstorrent" and n300["properties"]["chips"] == "2"
           and n300["properties"]["dram_speed"] == "12G", f"{label}: properties from sysfs and tt-smi")
    expect(not [w for w in r["warnings"] if w["backend"] in ("tenstorrent", "plugin")], f"{label}: no plugin warning")

isolated = detect("n300-and-p150a")
inproc = detect("n300-and-p150a", "--plugins-in-process")
expect(isolated == inproc, "isolated and in-process detection give the same registry")

metrics = run("metrics", "--fixture", os.path.join(fixtures, "n300-and-p150a"))
expect('hwaccel_device_info{device="tenstorrent:1",backend="plugin",model="Tenstorrent Blackhole p150a"' in metrics,
       "hwaccel metrics exports the cards' inventory")

specs = os.path.join(source, "device-specs.json")
env["HWACCEL_DEVICE_SPECS"] = specs
plan = json.loads(run("plan", "--model", "llama-3.1-8b", "--fixture", os.path.join(fixtures, "n300-and-p150a"),
                      "--json"))
expect(plan.get("fits") is True, "llama-3.1-8b fits the p150a through the user's device-spec file")
del env["HWACCEL_DEVICE_SPECS"]

r = detect("n150-in-container")
devices = plugin_devices(r)
expect(len(devices) == 1 and devices[0]["name"] == "Tenstorrent Wormhole n150", "n150 found from sysfs alone")
expect(not devices[0]["available"], "without /dev/tenstorrent/0 the card is unavailable")
messages = " | ".join(w["message"] for w in r["warnings"] if w["backend"] == "tenstorrent")
expect("/dev/tenstorrent/0 is missing" in messages, "a warning names the missing device node")
expect("tt-smi is not on PATH" in messages, "a warning says tt-smi is missing")
expect(devices[0]["pcie"]["current_width"] == 4 and devices[0]["pcie"]["max_width"] == 16, "the link trained at x4 of x16")
print("all checks passed")
