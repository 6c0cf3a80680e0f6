#!/usr/bin/env python3
"""Validates real registry JSON against docs/registry.schema.json.

usage: validate_registry.py SCHEMA JSON_DOC HWACCEL FIXTURES_DIR

- The schema is a valid JSON Schema (draft 2020-12).
- Every fixture's expected.json, every fixture replayed by `hwaccel detect
  --fixture` (timings included), and a live `hwaccel detect` of this machine
  validate.
- Broken documents are rejected (so the schema is not vacuous).
- Every field the schema names is described in docs/json.md.
"""
import copy
import json
import os
import re
import subprocess
import sys

import jsonschema

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def validate(validator, name, document):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    for e in errors:
        fail(f"{name}: {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}")
    if not errors:
        print(f"ok: {name}")


def detect(hwaccel, *args):
    result = subprocess.run([hwaccel, "detect", *args], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"hwaccel detect {' '.join(args)} exited with {result.returncode}: {result.stderr.strip()}")
        return None
    return json.loads(result.stdout)


def field_names(node, names):
    if isinstance(node, dict):
        if node.get("type") == "object":
            names.update(node.get("properties", {}))
        for value in node.values():
            field_names(value, names)
    elif isinstance(node, list):
        for value in node:
            field_names(value, names)
    return names


def check_rejections(validator, good):
    device = {"id": "cuda:0", "backend": "cuda", "family": "gpu", "index": 0, "name": "GPU",
              "memory_kind": "dedicated", "integrated": False, "available": True, "visible": True}
    base = copy.deepcopy(good)
    base["devices"].append(device)
    if list(validator.iter_errors(base)):
        return fail("a well-formed added device does not validate")
    cases = {
        "unknown family": lambda d: d["devices"][-1].update(family="fpga"),
        "unknown backend": lambda d: d["devices"][-1].update(backend="nvidia"),
        "missing id": lambda d: d["devices"][-1].pop("id"),
        "negative memory": lambda d: d["devices"][-1].update(memory_bytes=-1),
        "non-canonical PCI address": lambda d: d["devices"][-1].update(pci_bus_id="17:00.0"),
        "undocumented device field": lambda d: d["devices"][-1].update(gpu_clock_mhz=1980),
        "string where a number belongs": lambda d: d["devices"][-1].update(memory_bytes="80 GB"),
        "unknown warning kind": lambda d: d["warnings"].append({"backend": "cuda", "kind": "oops", "message": "x"}),
        "missing schema_version": lambda d: d.pop("schema_version"),
        "undocumented top-level field": lambda d: d.update(extra=1),
    }
    for name, change in cases.items():
        if not list(validator.iter_errors(broken_with(base, change))):
            fail(f"the schema accepts a document with {name}")
    print(f"ok: the schema rejects {len(cases)} kinds of broken document")


def broken_with(base, change):
    doc = copy.deepcopy(base)
    change(doc)
    return doc


def main():
    schema_path, doc_path, hwaccel, fixtures = sys.argv[1:5]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    machines = sorted(os.path.join(fixtures, m) for m in os.listdir(fixtures))
    first = None
    for machine in machines:
        with open(os.path.join(machine, "expected.json"), encoding="utf-8") as f:
            expected = json.load(f)
        first = first or expected
        validate(validator, os.path.relpath(os.path.join(machine, "expected.json"), os.path.dirname(fixtures)), expected)
        replayed = detect(hwaccel, "--fixture", machine)
        if replayed is not None:
            if "timings_us" not in replayed:
                fail(f"hwaccel detect --fixture {machine} wrote no timings_us")
            validate(validator, f"hwaccel detect --fixture {os.path.basename(machine)}", replayed)
    live = detect(hwaccel)
    if live is not None:
        validate(validator, "hwaccel detect (this machine)", live)
    if first is None:
        fail(f"no fixture under {fixtures}")
    else:
        check_rejections(validator, first)

    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    undocumented = sorted(n for n in field_names(schema, set()) if f"`{n}`" not in doc)
    if undocumented:
        fail(f"fields of {os.path.basename(schema_path)} not described in {doc_path}: {', '.join(undocumented)}")
    else:
        print(f"ok: every field of the schema is described in {os.path.basename(doc_path)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
