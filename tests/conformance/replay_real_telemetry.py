#!/usr/bin/env python3
"""Telemetry of real NVIDIA captures that hold only the reports: for every
capture of real_captures.json whose commands include `nvidia-smi -q -x` or
`nvidia-smi -q` but no `--query-gpu` query (what telegraf, netdata and bug
reports keep), `hwaccel capture --import` makes a fixture and `hwaccel metrics
--fixture --json` samples it. Each GPU's memory in use, GPU temperature and
power draw must equal what the report says, read here by an independent
reader (xml.etree for the XML, the section layout for the text); a value the
report lacks must be absent; and the sample must not fail the cuda source.

usage: replay_real_telemetry.py HWACCEL DATA_JSON [SHARED_REAL_DIR]
Skips (exit 77) when the shared captures are not there.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_real_captures import shared_dir  # noqa: E402

MIB = 1 << 20


def number(text, unit):
    """'38 C' -> 38.0; None for 'N/A', '[N/A]', 'Not Supported' or another unit."""
    m = re.fullmatch(r"\s*(-?[0-9.]+)\s*" + re.escape(unit) + r"\s*", text or "")
    return float(m.group(1)) if m else None


def from_xml(text):
    """(bus id, used bytes, temperature, power) per GPU of a `-q -x` report."""
    root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", text))
    out = []
    for gpu in root.findall("gpu"):
        used = number(gpu.findtext("fb_memory_usage/used"), "MiB")
        power = gpu.findtext("gpu_power_readings/power_draw")
        if power is None:
            power = gpu.findtext("power_readings/power_draw")
        out.append((gpu.get("id", "").lower(), None if used is None else int(used * MIB),
                    number(gpu.findtext("temperature/gpu_temp"), "C"), number(power, "W")))
    return out


def from_text(text):
    """The same from a `-q` report: keys under their section headings."""
    out, gpu, section = [], None, ""
    for line in text.splitlines():
        if re.match(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\s*$", line):
            gpu = {"bus": line[4:].strip().lower()}
            out.append(gpu)
            continue
        if gpu is None or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        key, value = key.strip(), value.strip()
        if not _ and indent <= 4:
            section = key
            continue
        if section == "FB Memory Usage" and key == "Used" and "used" not in gpu:
            used = number(value, "MiB")
            gpu["used"] = None if used is None else int(used * MIB)
        elif section == "Temperature" and key == "GPU Current Temp":
            gpu["temp"] = number(value, "C")
        elif section in ("GPU Power Readings", "Power Readings") and key == "Power Draw" and "power" not in gpu:
            gpu["power"] = number(value, "W")
    return [(g["bus"], g.get("used"), g.get("temp"), g.get("power")) for g in out]


def canonical_bus(bus):
    """'00000000:18:00.0' -> '0000:18:00.0', the registry's form."""
    parts = bus.split(":")
    if len(parts) == 3 and len(parts[0]) == 8:
        parts[0] = parts[0][4:]
    return ":".join(parts)


def main():
    hwaccel, data = sys.argv[1], sys.argv[2]
    shared = shared_dir(sys.argv)
    if not os.path.isdir(shared):
        print(f"skipped: {shared} is not there")
        return 77
    entries = json.load(open(data, encoding="utf-8"))["captures"]
    chosen = []
    for e in entries:
        argvs = [" ".join(c["argv"]) for c in e["import"]["commands"]]
        reports = [c for c in e["import"]["commands"] if " ".join(c["argv"]) in ("nvidia-smi -q -x", "nvidia-smi -q")]
        if reports and not any(a.startswith("nvidia-smi --query-gpu") for a in argvs):
            chosen.append((e, reports[0]))
    failures = []
    for entry, report in chosen:
        name = entry["capture"]
        folder = os.path.join(shared, name)
        with open(os.path.join(folder, report["stdout"]), encoding="utf-8", errors="replace") as f:
            text = f.read()
        expected = from_xml(text) if report["argv"][-1] == "-x" else from_text(text)
        with tempfile.TemporaryDirectory() as work:
            transcript = os.path.join(work, "transcript.txt")
            with open(transcript, "w", encoding="utf-8") as f:
                for c in entry["import"]["commands"]:
                    with open(os.path.join(folder, c["stdout"]), encoding="utf-8", errors="replace") as out:
                        f.write(f"$ {' '.join(c['argv'])}\n{out.read()}\n")
            fixture = os.path.join(work, "fixture")
            subprocess.run([hwaccel, "capture", "--import", transcript, "--out", fixture], check=True, capture_output=True)
            detected = json.loads(subprocess.run([hwaccel, "detect", "--fixture", fixture, "--json"], check=True,
                                                 capture_output=True, text=True).stdout)
            run = subprocess.run([hwaccel, "metrics", "--fixture", fixture, "--json"], capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{name}: hwaccel metrics exited {run.returncode}: {run.stderr.strip()[:200]}")
            continue
        sample = json.loads(run.stdout)
        if "cuda" in sample.get("failed_sources", []):
            failures.append(f"{name}: the cuda source failed: {sample.get('warnings')}")
            continue
        buses = {d["id"]: d.get("pci_bus_id") for d in detected["devices"] if d.get("backend") == "cuda"}
        by_bus = {buses.get(t["device_id"]): t for t in sample["devices"] if t["device_id"] in buses}
        if not any(v is not None for row in expected for v in row[1:]):
            failures.append(f"{name}: the report gives none of the values compared (the check would say nothing)")
        for bus, used, temp, power in expected:
            t = by_bus.get(canonical_bus(bus))
            if t is None:
                failures.append(f"{name}: no telemetry for the GPU at {bus}")
                continue
            got_temp = next((x["celsius"] for x in t.get("temperatures", []) if x["sensor"] == "gpu"), None)
            for what, want, got in (("memory used", used, t.get("memory_used_bytes")), ("temperature", temp, got_temp),
                                    ("power", power, t.get("power_watts"))):
                if want != got:
                    failures.append(f"{name} {bus}: {what} {got!r}, the report says {want!r}")
            if t.get("source") != " ".join(report["argv"]):
                failures.append(f"{name} {bus}: source {t.get('source')!r}")
        print(f"{name}: {len(expected)} GPU(s) from {' '.join(report['argv'])}")
    if len(chosen) < 4:
        failures.append(f"only {len(chosen)} report-only captures (expected the 6 of real_captures.json)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
