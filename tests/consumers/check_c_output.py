#!/usr/bin/env python3
"""Compares what the C API consumer printed with the fixture's expected.json.

usage: check_c_output.py EXPECTED_JSON C_OUTPUT C_JSON

Every device and warning of expected.json must appear, in order and with the
same field values, in C_OUTPUT's "device ..." and "warning ..." lines; C_JSON
(the consumer's hwaccel_registry_to_json output) must equal expected.json; the
error lines must carry the statuses the C API documents.
"""
import json
import sys


def text(value):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def device_line(d):
    fields = [
        ("id", d["id"]), ("backend", d["backend"]), ("family", d["family"]), ("index", d["index"]),
        ("name", d["name"]), ("memory_bytes", d.get("memory_bytes")),
        ("memory_free_bytes", d.get("memory_free_bytes")), ("pci_bus_id", d.get("pci_bus_id")),
        ("numa_node", d.get("numa_node")), ("compute_capability", d.get("compute_capability")),
        ("driver_version", d.get("driver_version")), ("visible", d.get("visible", True)),
        ("available", d.get("available", True)), ("runtime_index", d.get("runtime_index")),
    ]
    return "device " + " ".join(f"{k}={text(v)}" for k, v in fields)


def warning_line(w):
    return f"warning backend={w['backend']} kind={w['kind']} message={w['message']}"


def main():
    expected_path, output_path, json_path = sys.argv[1:4]
    with open(expected_path, encoding="utf-8") as f:
        expected_text = f.read()
    expected = json.loads(expected_text)
    with open(output_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(json_path, encoding="utf-8") as f:
        c_json = f.read()

    problems = []
    want = [device_line(d) for d in expected["devices"]] + [warning_line(w) for w in expected["warnings"]]
    got = [line for line in lines if line.startswith(("device ", "warning "))]
    if got != want:
        problems.append("device/warning lines differ:\n  expected:\n    " + "\n    ".join(want) +
                        "\n  got:\n    " + "\n    ".join(got))
    if not want:
        problems.append("expected.json lists no device: nothing was compared")
    if c_json != expected_text:
        problems.append("hwaccel_registry_to_json output differs from expected.json")
    accelerators = any(d["family"] != "cpu" and d.get("available", True) and d.get("visible", True)
                       for d in expected["devices"])
    for line in (f"has_accelerator={1 if accelerators else 0}",
                 "error set_backends status=invalid_argument",
                 "error fixture status=not_found",
                 "error from_json status=parse_error"):
        if line not in lines:
            problems.append(f"missing line: {line}")
    if not any(line.startswith("version ") and f"schema={expected['schema_version']}" in line for line in lines):
        problems.append("missing or wrong version line")

    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"C API consumer: {len(expected['devices'])} device(s), {len(expected['warnings'])} warning(s) as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
