#!/usr/bin/env python3
"""Validates a data file the library reads (data/device-specs.json,
data/runtime-profiles.json, ...) against its JSON Schema.

usage: validate_data.py SCHEMA DATA_FILE [--mutations]

- The schema is a valid JSON Schema (draft 2020-12); DATA_FILE is strict
  JSON (no NaN or Infinity, no key twice in an object: the library's readers
  refuse both, and Python's json module would hide them from the schema) and
  validates against it, format checking off. Each error is printed with its
  JSON path; any error is exit status 1. On success one line:
  "DATA_FILE: N entries valid against SCHEMA".
- --mutations (also spelled --invalid-cases): broken copies of the data,
  derived in memory from what the schema itself says (its "required" lists,
  property types, bounds, enums and closed objects), must each be rejected,
  so that the schema is shown not to be vacuous. Nothing about one format is
  written here: the entries are the first top-level property that is an
  array of objects, and the fields to break are picked from the schema.
"""
import copy
import json
import sys

import jsonschema

UNKNOWN_KEY = "no_such_field_in_the_schema"
UNKNOWN_ENUM_VALUE = "no-such-value-in-the-schema"


def json_path(path):
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def load_strict(path):
    """The document and a list of problems the schema cannot see."""
    problems = []

    def pairs(items):
        seen = {}
        for key, value in items:
            if key in seen:
                problems.append(f"key \"{key}\" given twice in one object")
            seen[key] = value
        return seen

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    with open(path, encoding="utf-8") as f:
        return json.load(f, object_pairs_hook=pairs, parse_constant=constant), problems


def explain(error):
    """(path, message) of an error; under anyOf/oneOf ("a value or null") the
    branch that comes closest (of the value's type, the deepest) says what is wrong."""
    while error.validator in ("anyOf", "oneOf") and error.context:
        branches = [c for c in error.context if c.validator != "type"]
        if not branches:
            types = []
            for c in error.context:
                for t in [c.validator_value] if isinstance(c.validator_value, str) else c.validator_value:
                    if t not in types:
                        types.append(t)
            return error.absolute_path, f"{error.instance!r} is not of type {' or '.join(map(repr, types))}"
        deepest = max(len(c.absolute_path) for c in branches)
        error = next(c for c in branches if len(c.absolute_path) == deepest)
    return error.absolute_path, error.message


# --- Reading the schema --------------------------------------------------------


class Schema:
    def __init__(self, root):
        self.root = root

    def resolve(self, node):
        """`node` with local $refs followed (a $ref beside other keywords is merged)."""
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#"):
            target = self.root
            for part in node["$ref"][1:].split("/")[1:]:
                target = target[part.replace("~1", "/").replace("~0", "~")]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **rest} if rest else target
            seen += 1
            if seen > 64:
                raise ValueError("a $ref cycle in the schema")
        return node if isinstance(node, dict) else {}

    def branches(self, node):
        """The alternatives a value may take: the node itself and its anyOf/oneOf branches, flattened."""
        node = self.resolve(node)
        alternatives = node.get("anyOf", []) + node.get("oneOf", [])
        if not alternatives:
            return [node]
        out = []
        for branch in alternatives:
            merged = {**{k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}, **self.resolve(branch)}
            out.extend(self.branches(merged))
        return out

    def types(self, node):
        """The JSON types a property may hold, or None when the schema does not say."""
        found = set()
        for branch in self.branches(node):
            if "type" in branch:
                t = branch["type"]
                found.update([t] if isinstance(t, str) else t)
            elif "const" in branch:
                found.add(json_type(branch["const"]))
            elif "enum" in branch:
                found.update(json_type(v) for v in branch["enum"])
            else:
                return None
        if "integer" in found and "number" in found:
            found.discard("integer")
        return found

    def object_schema(self, node):
        """The schema of an object a property holds (its closed object branch), or None."""
        for branch in self.branches(node):
            if branch.get("type") == "object" or "properties" in branch:
                return branch
        return None


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def value_of_another_type(types):
    """A value whose JSON type is none of `types`: a quoted number where a
    number belongs, a number where a string does, else an object, array or
    boolean."""
    numeric = bool({"number", "integer"} & types)
    candidates = [("string", "12"), ("number", 12.5)] if numeric else [("number", 12.5), ("string", "12")]
    for kind, value in candidates + [("object", {"x": 1}), ("array", [1]), ("boolean", True)]:
        if kind not in types:
            return value
    return None


def out_of_bounds(branches):
    """A value out of a bound every branch of a numeric property sets, or None."""
    for branch in branches:
        if "maximum" in branch:
            return branch["maximum"] + 1
        if "exclusiveMaximum" in branch:
            return branch["exclusiveMaximum"]
        if "minimum" in branch:
            return branch["minimum"] - 1
        if "exclusiveMinimum" in branch:
            return branch["exclusiveMinimum"]
    return None


def entries_of(data, schema):
    """(key, entries, item schema) of the first top-level array of objects."""
    if not isinstance(data, dict):
        return None, None, None
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            prop = schema.resolve(schema.root).get("properties", {}).get(key, {})
            items = None
            for branch in schema.branches(prop):
                if "items" in branch:
                    items = schema.resolve(branch["items"])
                    break
            return key, value, items
    return None, None, None


# --- Broken copies ---------------------------------------------------------------


def mutations(data, schema):
    """(name, broken document) pairs; each must be rejected."""
    out = []
    root = schema.resolve(schema.root)
    key, entries, item = entries_of(data, schema)
    if key is None or not item:
        return out, "no top-level array of objects with an item schema to derive broken entries from"

    def broken(name, change):
        doc = copy.deepcopy(data)
        change(doc[key][0])
        out.append((f"{key}[0]: {name}", doc))

    first = entries[0]
    props = item.get("properties", {})
    required = list(item.get("required", []))
    # Required fields first, then the rest in the schema's order: the fields a reader needs most.
    order = required + [p for p in props if p not in required]

    # 1. A required field dropped.
    if required:
        field = next((f for f in required if f in first), required[0])
        broken(f"required \"{field}\" dropped", lambda e, f=field: e.pop(f, None))

    # 2. A value of the wrong JSON type (a number's field first: a quoted number is the usual slip).
    numeric_first = sorted(order, key=lambda f: not {"number", "integer"} & (schema.types(props.get(f, {})) or set()))
    for field in numeric_first:
        types = schema.types(props.get(field, {}))
        if types:
            value = value_of_another_type(types)
            if value is not None:
                broken(f"\"{field}\" of the wrong type ({json.dumps(value)})", lambda e, f=field, v=value: e.update({f: v}))
                break

    # 3. A number out of its bounds.
    for field in order:
        branches = [b for b in schema.branches(props.get(field, {})) if b.get("type") != "null"]
        if branches and all(set([b.get("type")] if isinstance(b.get("type"), str) else b.get("type") or [])
                            & {"number", "integer"} for b in branches):
            value = out_of_bounds(branches)
            if value is not None:
                broken(f"\"{field}\" out of bounds ({value})", lambda e, f=field, v=value: e.update({f: v}))
                break

    # 4. An unknown key in a closed entry.
    if item.get("additionalProperties") is False:
        broken(f"unknown key \"{UNKNOWN_KEY}\"", lambda e: e.update({UNKNOWN_KEY: 1}))

    # 5. A value no enum of a string field lists.
    for field in order:
        branches = [b for b in schema.branches(props.get(field, {})) if b.get("type") != "null"]
        lists_names = any("enum" in b and any(isinstance(v, str) for v in b["enum"]) for b in branches)
        # Every other branch must constrain the string too, or it would take the unknown value.
        if lists_names and all("enum" in b or "const" in b or (b.get("type") == "string" and "pattern" in b)
                               for b in branches):
            broken(f"\"{field}\" not one of its enum", lambda e, f=field: e.update({f: UNKNOWN_ENUM_VALUE}))
            break

    # 6. An unknown key in a closed object an entry holds (the first the data has).
    for field in order:
        nested = schema.object_schema(props.get(field, {}))
        if nested and nested.get("additionalProperties") is False and isinstance(first.get(field), dict):
            broken(f"unknown key \"{UNKNOWN_KEY}\" in \"{field}\"", lambda e, f=field: e[f].update({UNKNOWN_KEY: 1}))
            break

    # 7. The document itself: the entries' array emptied where it needs some, an unknown top-level key where refused.
    prop = root.get("properties", {}).get(key, {})
    if any(b.get("minItems", 0) >= 1 for b in schema.branches(prop)):
        doc = copy.deepcopy(data)
        doc[key] = []
        out.append((f"\"{key}\" empty", doc))
    if root.get("additionalProperties") is False:
        doc = copy.deepcopy(data)
        doc[UNKNOWN_KEY] = 1
        out.append((f"unknown top-level key \"{UNKNOWN_KEY}\"", doc))
    return out, None


def main(argv):
    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or flags - {"--mutations", "--invalid-cases"}:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    schema_path, data_path = args
    with open(schema_path, encoding="utf-8") as f:
        root = json.load(f)
    try:
        jsonschema.Draft202012Validator.check_schema(root)
    except jsonschema.SchemaError as e:
        print(f"{schema_path}: not a valid draft 2020-12 schema: {e.message}", file=sys.stderr)
        return 1
    validator = jsonschema.Draft202012Validator(root)  # no format_checker: "format" is not checked
    schema = Schema(root)

    try:
        data, problems = load_strict(data_path)
    except (ValueError, OSError) as e:
        print(f"{data_path}: {e}", file=sys.stderr)
        return 1
    failed = False
    for problem in problems:
        print(f"{data_path}: {problem}", file=sys.stderr)
        failed = True
    for e in sorted(validator.iter_errors(data), key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, p)
                                                             for p in e.absolute_path]):
        path, message = explain(e)
        print(f"{data_path}: {json_path(path)}: {message}", file=sys.stderr)
        failed = True
    if failed:
        return 1
    key, entries, _ = entries_of(data, schema)
    print(f"{data_path}: {len(entries) if entries else 0} entries valid against {schema_path}")

    if flags & {"--mutations", "--invalid-cases"}:
        cases, why_none = mutations(data, schema)
        if why_none:
            print(f"{data_path}: {why_none}", file=sys.stderr)
            return 1
        accepted = [name for name, doc in cases if validator.is_valid(doc)]
        for name in accepted:
            print(f"{schema_path}: accepts a broken copy of {data_path}: {name}", file=sys.stderr)
        if accepted:
            return 1
        if len(cases) < 5:
            print(f"{schema_path}: only {len(cases)} broken copies could be derived (at least 5 are needed "
                  "to show the schema is not vacuous)", file=sys.stderr)
            return 1
        for name, _ in cases:
            print(f"  rejected: {name}")
        print(f"{schema_path}: rejects all {len(cases)} broken copies of {data_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
