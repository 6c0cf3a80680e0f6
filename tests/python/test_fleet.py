"""The fleet layer from Python (docs/fleet.md): the same scans, documents,
history, diffs, checks and exports as `hwaccel fleet` and `hwaccel export`."""

from __future__ import annotations

import json
import pathlib
import pickle
import sqlite3
import threading

import pytest

import hwaccel
from conftest import EIGHT_GPU, MACHINES, run_cli


def registry_line(machine: str, host: str) -> str:
    done = run_cli("detect", "--fixture", str(MACHINES / machine), "--host", host, "--no-timings")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def two_nodes() -> hwaccel.Fleet:
    return hwaccel.scan_lines(
        registry_line("dgx-h100-8x-nvswitch", "gpu-1") + "\n" + registry_line("amd-8x-mi300x-xgmi", "gpu-2") + "\n"
    )


def test_scan_lines_names_nodes_by_host(two_nodes: hwaccel.Fleet) -> None:
    assert [n.host for n in two_nodes] == ["gpu-1", "gpu-2"]
    assert len(two_nodes) == 2
    assert two_nodes["gpu-1"].answered and two_nodes["gpu-1"].registry is not None
    assert two_nodes["gpu-1"].registry.best() is not None
    assert two_nodes.totals.accelerators == 16
    assert {c.key: c.devices for c in two_nodes.totals.by_backend} == {"cuda": 8, "rocm": 8}
    unnamed = hwaccel.scan_lines("garbage\n")
    assert len(unnamed) == 0 and "line 1: not a registry" in unnamed.warnings[0]


def test_document_round_trips_and_pickles(two_nodes: hwaccel.Fleet) -> None:
    again = hwaccel.Fleet.from_json(two_nodes.to_json())
    assert again == two_nodes
    assert pickle.loads(pickle.dumps(two_nodes)) == two_nodes
    with pytest.raises(hwaccel.ParseError):
        hwaccel.Fleet.from_json('{"fleet_schema_version": 1, "nodes": [{"host": "-x"}]}')


def test_files_and_bad_files(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.json").write_text(registry_line("dgx-h100-8x-nvswitch", "gpu-1"))
    (tmp_path / "b.json").write_text("{")
    fleet = hwaccel.scan_files(tmp_path)
    assert fleet["gpu-1"].answered
    error = fleet["b"].error
    assert error is not None and error.kind == "parse_error"


def test_scan_hosts_runs_the_command_per_host(tmp_path: pathlib.Path) -> None:
    fleet = hwaccel.scan_hosts(["node-a", "node-b"], "false {host}", deadline=5, concurrency=2)
    assert [n.error.kind for n in fleet if n.error is not None] == ["failed", "failed"]
    with pytest.raises(hwaccel.InvalidInput):
        hwaccel.scan_hosts(["-oProxyCommand=x"], "ssh {host} hwaccel detect")
    with pytest.raises(hwaccel.InvalidInput):
        hwaccel.scan_hosts(["a"], "hwaccel detect")  # no {host}


def test_store_diff_and_check(tmp_path: pathlib.Path, two_nodes: hwaccel.Fleet) -> None:
    store = hwaccel.FleetStore(tmp_path / "fleet.sqlite")
    first = store.append(two_nodes)
    one_node = hwaccel.scan_lines(registry_line("amd-8x-mi300x-xgmi", "gpu-2"))
    second = store.append(one_node)
    assert store.latest() == second and store.previous(second) == first
    assert store.load(first) == two_nodes
    scans = store.scans()
    assert [s.nodes for s in scans] == [2, 1] and scans[0].scanned_at.tzinfo is not None
    assert [(n.host, n.change) for n in two_nodes.diff(one_node).nodes] == [("gpu-1", "gone")]
    assert one_node.check(two_nodes) == [("gpu-1", "gpu-1: not in the scan")]
    assert two_nodes.check(two_nodes) == []
    with pytest.raises(hwaccel.NotFound):
        store.load(999)
    assert store.prune(1) == 1 and len(store.scans()) == 1
    reader = hwaccel.FleetStore(tmp_path / "fleet.sqlite", read_only=True)
    with pytest.raises(hwaccel.PermissionDenied):
        reader.append(two_nodes)
    # Other programs read the same file with plain SQL.
    with sqlite3.connect(tmp_path / "fleet.sqlite") as db:
        assert db.execute("SELECT count(*) FROM devices WHERE backend = 'rocm'").fetchone()[0] == 8


def test_corrupt_database_is_a_clear_error(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"x" * 4096)
    with pytest.raises(hwaccel.ParseError, match="not a SQLite database"):
        hwaccel.FleetStore(bad)


def test_threads_each_with_their_store(tmp_path: pathlib.Path, two_nodes: hwaccel.Fleet) -> None:
    path = tmp_path / "fleet.sqlite"
    ids: list[int] = []

    def write() -> None:
        ids.append(hwaccel.FleetStore(path).append(two_nodes))

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ids) == [1, 2, 3, 4]


def test_exports_match_the_cli() -> None:
    labels = hwaccel.nfd_labels(fixture=EIGHT_GPU, vendor_labels=True)
    assert labels["nvidia.com/gpu.count"] == "8"
    cli = run_cli("export", "nfd", "--fixture", str(EIGHT_GPU), "--vendor-labels")
    assert cli.returncode == 0
    assert dict(line.split("=", 1) for line in cli.stdout.splitlines() if not line.startswith("#")) == labels
    registry = hwaccel.detect(fixture=EIGHT_GPU)
    assert hwaccel.nfd_labels(registry) == hwaccel.nfd_labels(fixture=EIGHT_GPU)
    slurm = hwaccel.slurm_config(fixture=EIGHT_GPU, node_name="dgx-01")
    gres = run_cli("export", "slurm", "--fixture", str(EIGHT_GPU), "--node-name", "dgx-01")
    assert slurm.gres_conf == gres.stdout
    assert slurm.node_line.startswith("NodeName=dgx-01 CPUs=224 ")
    assert json.loads(hwaccel.Fleet.from_json(registry.to_json()).to_json())["totals"]["accelerators"] == 8
