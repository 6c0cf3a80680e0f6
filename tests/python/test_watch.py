"""Watching from Python and from the CLI (docs/watch.md): a fixture timeline
replayed through hwaccel.Watcher and `hwaccel watch`."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

import hwaccel
from conftest import MACHINES, run_cli

BASE = "h100-nvl-pair-nvlink-bridge"


@pytest.fixture()
def driver_update(tmp_path: pathlib.Path) -> pathlib.Path:
    """The H100 pair, then a driver reload storm that ends on a new driver."""
    root = tmp_path / "timeline"
    shutil.copytree(MACHINES / BASE, root, symlinks=True)
    state = root / "steps" / "1"
    shutil.copytree(root / "commands", state / "commands")
    shutil.copy(root / "fixture.json", state / "fixture.json")
    query = state / "commands" / "nvidia-smi-query-gpu.out"
    query.write_text(query.read_text().replace("550.54.14", "550.127.05"))
    storm = []
    for _ in range(5):
        storm.append({"uevent": {"ACTION": "remove", "DEVPATH": "/module/nvidia", "SUBSYSTEM": "module"}})
        storm.append({"uevent": {"ACTION": "add", "DEVPATH": "/module/nvidia", "SUBSYSTEM": "module"}})
    storm.append({"uevent": "garbage without a header"})
    (root / "timeline.json").write_text(
        json.dumps({"format": 1, "steps": [{"name": "driver-reload", "events": storm, "state": "steps/1"}]})
    )
    return root


def test_watcher_replays_a_timeline(driver_update: pathlib.Path) -> None:
    with hwaccel.Watcher(fixture=driver_update) as watcher:
        events = list(watcher)
        assert watcher.finished
        assert watcher.detections == 2
        assert watcher.sources == ["recorded timeline"]
        assert len(watcher.registry.devices) == len(hwaccel.detect(fixture=MACHINES / BASE).devices)
    assert [e["event"] for e in events] == ["changed", "changed"]
    assert {e["identity"] for e in events} == {"0000:ad:00.0", "0000:ae:00.0"}
    for e in events:
        assert e["change"] == 1
        assert e["backend"] == "cuda"
        assert e["fields"][0] == {"field": "driver_version", "before": "550.54.14", "after": "550.127.05"}


def test_watcher_without_a_stream_rescans(tmp_path: pathlib.Path) -> None:
    with hwaccel.Watcher(fixture=MACHINES / BASE, interval=0.05) as watcher:
        assert watcher.sources == ["periodic re-scan every 50 ms"]
        assert watcher.unavailable
        assert watcher.next_event(timeout=0.3) is None
    with pytest.raises(hwaccel.Unsupported):
        hwaccel.Watcher(fixture=MACHINES / BASE, interval=0)
    with pytest.raises(hwaccel.InvalidInput):
        hwaccel.Watcher(fixture=MACHINES / BASE, interval=-1)


def test_cli_watch_prints_json_lines(driver_update: pathlib.Path) -> None:
    done = run_cli("watch", "--fixture", str(driver_update), "--full")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["event"] for line in lines] == ["changed", "changed", "registry"]
    assert lines[2]["cause"] == "uevent"
    assert lines[2]["notifications"] == 10
    assert "cuda" in lines[2]["redetected"] and "rocm" not in lines[2]["redetected"]
    assert lines[2]["summary"]["devices"]
    assert "recorded timeline" in done.stderr

    table = run_cli("watch", "--fixture", str(driver_update), "--format", "table")
    assert table.returncode == 0, table.stderr
    assert "driver_version 550.54.14 -> 550.127.05" in table.stdout


def test_cli_watch_refuses_a_broken_timeline(driver_update: pathlib.Path) -> None:
    (driver_update / "timeline.json").write_text('{"format": 1, "steps": [{"state": "../../etc"}]}')
    done = run_cli("watch", "--fixture", str(driver_update))
    assert done.returncode == 1
    assert "inside the fixture" in done.stderr


def test_cli_capture_watch_records_a_timeline_that_replays(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "captured"
    done = run_cli("capture", "--out", str(out), "--backends", "cpu", "--watch", "0.5")
    assert done.returncode == 0, done.stderr
    timeline = json.loads((out / "timeline.json").read_text())
    assert timeline["format"] == 1
    assert isinstance(timeline["steps"], list)
    assert "replay with: hwaccel watch --fixture" in done.stderr
    replayed = run_cli("watch", "--fixture", str(out), "--backends", "cpu")
    assert replayed.returncode == 0, replayed.stderr
    # This machine did not change in half a second: nothing to report.
    assert replayed.stdout == "" or all(json.loads(line)["event"] for line in replayed.stdout.splitlines())
