#!/usr/bin/env python3
"""Replays every real capture of ../shared/fixtures/real through the CLI, exactly
as the capture holds it: `hwaccel capture --import` makes a fixture of the
capture's files alone (no added refusals), `hwaccel detect --fixture` replays
it, and the devices of the backend are checked against the ground truth of the
capture's SOURCE.md, kept in real_captures.json: the count (a lower bound where
the output was cut), each name (as the tool prints it; hwaccel may add a vendor
prefix) and each memory size (within 1 %; absent, never 0 or a guess, where the
capture gives none).

An entry with "known_gap" names a view hwaccel does not read yet: it is
reported as a gap, and fails the run if it unexpectedly passes (so that the
list of gaps stays true).

usage: replay_real_captures.py HWACCEL DATA_JSON [SHARED_REAL_DIR]
Skips (exit 77) when the shared captures are not there.
"""
import json
import os
import subprocess
import sys
import tempfile


def shared_dir(argv):
    if len(argv) > 3:
        return argv[3]
    env = os.environ.get("HWACCEL_SHARED_FIXTURES")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "fixtures", "real"))


def check(entry, devices):
    """The differences between a replay's devices and the ground truth."""
    expect = entry["expect"]
    problems = []
    mine = [d for d in devices if d.get("backend") == expect["backend"]]
    count = expect["count"]
    if expect.get("count_is_lower_bound"):
        if len(mine) < count:
            problems.append(f"{len(mine)} {expect['backend']} device(s), expected at least {count}")
    elif len(mine) != count:
        problems.append(f"{len(mine)} {expect['backend']} device(s), expected {count}")
    for i, device in enumerate(mine[: len(expect.get("names", []))]):
        want = expect["names"][i]
        if want and want not in device.get("name", ""):
            problems.append(f"device {i} is named {device.get('name')!r}, expected a name holding {want!r}")
    for i, device in enumerate(mine[: len(expect.get("memory_bytes", []))]):
        want = expect["memory_bytes"][i]
        got = device.get("memory_bytes")
        if want is None:
            if got is not None:
                problems.append(f"device {i} reports {got} bytes where the capture gives no memory size")
        elif got is None:
            problems.append(f"device {i} reports no memory, expected {want} bytes")
        elif abs(got - want) > want * 0.01:
            problems.append(f"device {i} reports {got} bytes, expected {want} (within 1 %)")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    hwaccel, data_path = argv[1], argv[2]
    real = shared_dir(argv)
    if not os.path.isdir(real):
        print(f"SKIP: the shared captures are not at {real} (set HWACCEL_SHARED_FIXTURES)")
        return 77
    with open(data_path, encoding="utf-8") as f:
        data = json.load(f)
    passed = failed = skipped = gaps = 0
    for entry in data["captures"]:
        name = entry["capture"]
        folder = os.path.join(real, name)
        if "skip" in entry:
            print(f"skip {name}: {entry['skip']}")
            skipped += 1
            continue
        if not os.path.isdir(folder):
            print(f"FAIL {name}: the capture folder {folder} is missing")
            failed += 1
            continue
        with tempfile.TemporaryDirectory(prefix="hwaccel-capture-") as tmp:
            manifest = dict(entry["import"])
            manifest["commands"] = [
                dict(c, stdout=os.path.join(folder, c["stdout"]),
                     **({"stderr": os.path.join(folder, c["stderr"])} if "stderr" in c else {}))
                for c in manifest.get("commands", [])
            ]
            manifest["files"] = [dict(f, **{"from": os.path.join(folder, f["from"])}) for f in manifest.get("files", [])]
            manifest_path = os.path.join(tmp, "import.json")
            with open(manifest_path, "w", encoding="utf-8") as f:
                json.dump(manifest, f)
            fixture = os.path.join(tmp, "fixture")
            imported = subprocess.run([hwaccel, "capture", "--import", manifest_path, "--out", fixture],
                                      capture_output=True, text=True, timeout=120)
            if imported.returncode != 0:
                print(f"FAIL {name}: capture --import exited {imported.returncode}: {imported.stderr.strip()}")
                failed += 1
                continue
            replay = subprocess.run([hwaccel, "detect", "--fixture", fixture, "--no-timings", "--no-system-probes"],
                                    capture_output=True, text=True, timeout=120)
            if replay.returncode != 0:
                print(f"FAIL {name}: detect exited {replay.returncode}: {replay.stderr.strip()}")
                failed += 1
                continue
            registry = json.loads(replay.stdout)
            problems = check(entry, registry.get("devices", []))
            if "known_gap" in entry:
                if problems:
                    print(f"gap  {name}: {entry['known_gap']} ({'; '.join(problems)})")
                    gaps += 1
                else:
                    print(f"FAIL {name}: listed as a known gap but replays correctly; remove \"known_gap\"")
                    failed += 1
            elif problems:
                print(f"FAIL {name}: " + "; ".join(problems))
                for w in registry.get("warnings", []):
                    print(f"     warning {w.get('source')}/{w.get('kind')}: {w.get('message')}")
                failed += 1
            else:
                print(f"ok   {name}")
                passed += 1
    print(f"known gaps: {gaps}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
