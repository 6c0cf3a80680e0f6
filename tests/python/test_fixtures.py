"""Every fixture machine replays through hwaccel.detect() to its expected.json,
the same goldens the C++ fixture test compares with."""

from __future__ import annotations

import json
import pathlib

import pytest

import hwaccel
from conftest import machine_dirs


@pytest.mark.parametrize("machine", machine_dirs(), ids=lambda p: p.name)
def test_replays_to_golden(machine: pathlib.Path) -> None:
    registry = hwaccel.detect(fixture=machine)
    expected = (machine / "expected.json").read_text()
    assert registry.to_json(pretty=True, timings=False) == expected
    # The Python view agrees with the document it came from.
    document = json.loads(expected)
    assert [d.to_dict() for d in registry.devices] == document["devices"]
    assert [w.to_dict() for w in registry.warnings] == document.get("warnings", [])
    assert len(registry.links) == len(document.get("links", []))
    assert len(registry.interconnects) == len(document.get("interconnects", []))


def test_there_are_fixtures() -> None:
    assert len(machine_dirs()) >= 70
