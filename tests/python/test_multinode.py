"""Plans over several nodes from Python: node syntax, copies of a node, the fabric, expert parallelism."""

import json

import pytest

import hwaccel


def test_two_nodes_of_eight_h100_serve_405b_bf16_as_tp8_pp2() -> None:
    plan = hwaccel.plan("llama-3.1-405b", devices="2x(8xH100-SXM-80GB)", quant="bf16", fabric="ib-8x400g")
    assert plan.fits is True
    assert (plan.strategy.tp, plan.strategy.pp, plan.strategy.nodes) == (8, 2, 2)
    assert plan.nodes == ["node0", "node1"]
    assert plan.fabric.kind == "infiniband" and plan.fabric.ports_per_node == 8
    assert {shard.node for shard in plan.shards} == {"node0", "node1"}
    assert plan.launch.ray[0] == "ray start --head --port=6379"
    assert "kind: LeaderWorkerSet" in plan.launch.kubernetes


def test_copies_of_one_node_plan_like_the_node_syntax() -> None:
    by_syntax = hwaccel.plan("llama-3.1-405b", devices="2x(8xH100-SXM-80GB)", quant="bf16")
    by_copies = hwaccel.plan("llama-3.1-405b", devices="8xH100-SXM-80GB", nodes=2, quant="bf16")
    assert by_syntax == by_copies
    assert hwaccel.plan("llama-3.1-405b", devices="8xH100-SXM-80GB", quant="bf16").fits is False


def test_expert_parallel_for_a_moe_model() -> None:
    plan = hwaccel.plan("deepseek-v3", devices="2x(8xH100-SXM-80GB)", quant="fp8", expert_parallel=True)
    assert plan.strategy.ep == plan.strategy.tp == 8
    assert "--enable-expert-parallel" in plan.launch.vllm


def test_bad_multi_node_arguments() -> None:
    with pytest.raises(hwaccel.InvalidInput, match="fabric"):
        hwaccel.plan("llama-3.1-8b", devices="2x(1xH100-SXM-80GB)", fabric="ib-0g")
    with pytest.raises(hwaccel.InvalidInput, match="devices"):
        hwaccel.plan("llama-3.1-8b", devices="2x(1xH100-SXM-80GB")
    with pytest.raises(hwaccel.InvalidInput, match="nodes"):
        hwaccel.plan("llama-3.1-8b", devices="2x(1xH100-SXM-80GB)", nodes=2)
    with pytest.raises(hwaccel.InvalidInput, match="nodes"):
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", nodes=0)


def _two_dgx_nodes() -> hwaccel.Fleet:
    from conftest import MACHINES, run_cli

    lines = []
    for host in ("gpu-a", "gpu-b"):
        done = run_cli("detect", "--fixture", str(MACHINES / "dgx-h100-8x-nvswitch"), "--host", host, "--no-timings")
        assert done.returncode == 0, done.stderr
        lines.append(done.stdout.strip())
    return hwaccel.scan_lines("\n".join(lines) + "\n")


def test_fleet_capacity_and_placement() -> None:
    fleet = _two_dgx_nodes()
    report = fleet.what_is_missing("llama-3.1-405b", quant="bf16")
    assert (report.nodes_needed, report.nodes_free, report.nodes_missing) == (2, 2, 0)
    busy = fleet.what_is_missing("llama-3.1-405b", quant="bf16", busy=["gpu-b"])
    assert (busy.nodes_free, busy.nodes_missing) == (1, 1)
    placed = fleet.place([{"model": "llama-3.1-70b", "replicas": 3, "quantization": "bf16"}])
    assert len(placed.placed) == 3 and placed.unplaced == []
    devices = [d for p in placed.placed for d in p.devices]
    assert len(devices) == len(set(devices))
    again = fleet.place([{"model": "llama-3.1-70b", "replicas": 3, "quantization": "bf16"}], busy=devices)
    assert not set(devices) & {d for p in again.placed for d in p.devices}
    with pytest.raises(hwaccel.InvalidInput, match="replicas"):
        fleet.place([{"model": "llama-3.1-8b", "replicas": 0}])


def test_fleet_placement_reads_a_runtime_profile_file(tmp_path) -> None:
    from conftest import SOURCE_DIR

    fleet = _two_dgx_nodes()
    workloads = [{"model": "llama-3.1-8b", "replicas": 1, "quantization": "bf16"}]
    builtin = fleet.place(workloads)
    same = tmp_path / "same.json"
    same.write_text(json.dumps(json.loads((SOURCE_DIR / "data" / "runtime-profiles.json").read_text())))
    assert fleet.place(workloads, runtime_profiles=same).placed == builtin.placed
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"format": "hwaccel-runtime-profiles", "version": 1, "profiles": []}))
    with pytest.raises(hwaccel.Error, match="runtime-profiles: .*has no entry for runtime"):
        fleet.place(workloads, runtime_profiles=empty)
