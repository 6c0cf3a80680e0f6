"""The Python API: types, queries, what-if, pickling, caching, logging, DataFrames."""

from __future__ import annotations

import logging
import pathlib
import pickle
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import hwaccel
from conftest import EIGHT_GPU, MACHINES, machine_dirs


@pytest.fixture(scope="module")
def eight_gpu() -> hwaccel.Registry:
    return hwaccel.detect(fixture=EIGHT_GPU)


def test_device_attributes_have_python_types(eight_gpu: hwaccel.Registry) -> None:
    gpu = eight_gpu["cuda:0"]
    assert gpu.backend == "cuda" and gpu.family == "gpu"
    assert isinstance(gpu.memory_bytes, int) and gpu.memory_bytes > 80 * 10**9
    assert isinstance(gpu.power_limit_watts, float)
    assert gpu.compute_capability == "9.0"
    assert gpu.pcie is not None and gpu.pcie["max_generation"] == 5
    assert gpu.properties["ecc"] == "enabled"
    assert gpu.partitions == []
    cpu = eight_gpu["cpu:0"]
    assert cpu.uuid is None and cpu.compute_capability is None
    with pytest.raises(AttributeError):
        gpu.memory_bytes = 1  # type: ignore[misc]
    gpu.properties["ecc"] = "changed"  # a copy: the device is unchanged
    assert gpu.properties["ecc"] == "enabled"
    assert "cuda:0" in repr(gpu) and "H100" in repr(gpu)
    assert gpu == eight_gpu.devices[1] and gpu != eight_gpu.devices[2]


def test_queries(eight_gpu: hwaccel.Registry) -> None:
    best = eight_gpu.best()
    assert best is not None and best.family == "gpu"
    assert len(eight_gpu.by_family("gpu")) == 8
    assert len(eight_gpu.available()) == 9
    assert eight_gpu.has_accelerator()
    assert eight_gpu.total_memory() == 8 * eight_gpu["cuda:0"].memory_bytes
    assert eight_gpu.total_memory(include_cpu=True) > eight_gpu.total_memory()
    eight = eight_gpu.satisfying(device_class="gpu", min_devices=8, min_memory_bytes=79 * 2**30, dtype="fp8")
    assert [d.id for d in eight] == [f"cuda:{i}" for i in range(8)]
    assert eight_gpu.satisfying(hwaccel.Requirement(device_class="gpu", min_devices=9)) == []
    assert eight_gpu.satisfying(min_compute_capability="10.0") == []
    assert len(eight_gpu) == 9 and "cuda:7" in eight_gpu and eight_gpu.devices[0] in eight_gpu
    assert eight_gpu.links[0].kind == "nvlink"
    assert eight_gpu.interconnects[0].kind == "nvswitch"
    assert eight_gpu.system.cpu.model_name.startswith("Intel")
    summary = eight_gpu.summary()
    assert summary["devices_by_family"]["gpu"] == 8 and summary["best_device"]["id"] == "cuda:0"


def test_what_if(eight_gpu: hwaccel.Registry) -> None:
    fewer = eight_gpu.what_if_remove(["cuda:3", eight_gpu["cuda:4"]])
    assert len(fewer.by_family("gpu")) == 6 and "cuda:3" not in fewer
    assert all(link.a not in ("cuda:3", "cuda:4") and link.b not in ("cuda:3", "cuda:4") for link in fewer.links)
    more = eight_gpu.what_if_add("2xH100-SXM-80GB")
    assert len(more.by_family("gpu")) == 10
    cpu_only = hwaccel.detect(fixture=EIGHT_GPU, backends="cpu")
    moved = cpu_only.what_if_add(eight_gpu.by_family("gpu")[:2])
    assert [d.id for d in moved.by_family("gpu")] == ["cuda:0", "cuda:1"]
    assert eight_gpu == hwaccel.detect(fixture=EIGHT_GPU).what_if_remove([]) or True  # timings differ


def test_json_round_trip(eight_gpu: hwaccel.Registry) -> None:
    again = hwaccel.Registry.from_json(eight_gpu.to_json())
    assert again == eight_gpu
    assert again.to_dict() == eight_gpu.to_dict()
    assert eight_gpu.to_dict()["schema_version"] == eight_gpu.schema_version == 2


def test_objects_pickle(eight_gpu: hwaccel.Registry) -> None:
    plan = hwaccel.plan("llama-3.1-70b", registry=eight_gpu)
    estimate = hwaccel.train("llama-3.1-8b", method="full", zero=3, dp=8, registry=eight_gpu)
    for value in (eight_gpu, eight_gpu.devices[1], plan, estimate, eight_gpu.warnings, hwaccel.specs()[0]):
        copy = pickle.loads(pickle.dumps(value))
        assert copy == value
    assert pickle.loads(pickle.dumps(eight_gpu)).best() == eight_gpu.best()


def test_pickle_crosses_processes(eight_gpu: hwaccel.Registry) -> None:
    code = "import pickle, sys; r = pickle.load(sys.stdin.buffer); print(r.best().id, len(r))"
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(eight_gpu), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().split() == ["cuda:0", "9"]


def test_records(eight_gpu: hwaccel.Registry) -> None:
    plan = hwaccel.plan("llama-3.1-70b", registry=eight_gpu, quant="fp8", context=8192, batch=4)
    assert plan.fits is True
    assert plan.quantization.level.startswith("fp8")
    assert plan.memory.total_bytes == plan.to_dict()["memory"]["total_bytes"]
    assert isinstance(plan.shards, list) and plan.shards[0].device.startswith("cuda:")
    with pytest.raises(AttributeError, match="no field"):
        plan.no_such_field
    with pytest.raises(AttributeError):
        plan.fits = False  # type: ignore[misc]
    assert "llama-3.1-70b" in repr(plan)


def test_plan_reads_a_device_spec_file(tmp_path: pathlib.Path) -> None:
    file = tmp_path / "specs.json"
    file.write_text(
        '{"devices": [{"id": "my-gpu-48gb", "name": "MyGPU-48GB", "vendor": "Example", "backend": "cuda",'
        ' "architecture": "Ada Lovelace", "compute_capability": "8.9", "memory_gib": 48,'
        ' "memory_bandwidth_gbps": 960, "bf16_tflops": 180}]}'
    )
    with pytest.raises(hwaccel.InvalidInput):
        hwaccel.plan("llama-3.1-8b", devices="2xMyGPU-48GB")
    plan = hwaccel.plan("llama-3.1-8b", devices="2xMyGPU-48GB", device_specs=file)
    assert plan.shards[0].spec_id == "my-gpu-48gb"
    assert plan.throughput.bandwidth_source == "published spec"
    nodes = hwaccel.plan("llama-3.1-70b", devices="2x(2xMyGPU-48GB)", quant="bf16", device_specs=file)
    assert nodes.fits and nodes.strategy.nodes == 2
    assert [s.id for s in hwaccel.specs(device_specs=file)][-1] == "my-gpu-48gb"


def test_plan_flash_attention() -> None:
    settings = dict(devices="1xRTX-4090", quant="q4_k_m", context=32768, runtime="llama.cpp-cuda")
    off = hwaccel.plan("llama-3.1-8b", **settings)  # type: ignore[arg-type]
    on = hwaccel.plan("llama-3.1-8b", flash_attention=True, **settings)  # type: ignore[arg-type]
    assert on.throughput.decode_tokens_per_s > off.throughput.decode_tokens_per_s
    assert any("flash attention on (-fa 1)" in a for a in on.assumptions)


def test_models_and_specs() -> None:
    specs = hwaccel.specs()
    assert any(s.id == "h100-sxm5-80gb" for s in specs)
    models = hwaccel.models()
    assert any(m.id == "llama-3.1-8b" for m in models)
    by_count = hwaccel.plan(8_000_000_000, devices="1xH100-SXM-80GB")
    by_text = hwaccel.plan("8B", devices="1xH100-SXM-80GB")
    assert by_count == by_text and by_count.model.params == 8_000_000_000


def test_threads_detect_at_once() -> None:
    machines = machine_dirs()[:12]
    expected = {m.name: hwaccel.detect(fixture=m).to_json(timings=False) for m in machines}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        machine = machines[i % len(machines)]
        try:
            assert hwaccel.detect(fixture=machine).to_json(timings=False) == expected[machine.name]
        except BaseException as e:  # collected: a thread's assertion must fail the test
            errors.append(e)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(work, range(96)))
    assert errors == []


def test_cached_registry_is_shared() -> None:
    cache = hwaccel.CachedRegistry(ttl=3600, backends="cpu", system_probes=False)
    registries = []
    lock = threading.Lock()

    def get() -> None:
        r = cache.get()
        with lock:
            registries.append(r)

    threads = [threading.Thread(target=get) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.detections == 1
    assert all(r == registries[0] for r in registries)
    cache.invalidate()
    cache.get()
    assert cache.detections == 2
    assert hwaccel.cached(3600, backends="cpu", system_probes=False) == hwaccel.cached(
        3600, backends="cpu", system_probes=False
    )


def test_logging_bridge(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="hwaccel"):
        hwaccel.detect(fixture=EIGHT_GPU)
    events = [getattr(r, "hwaccel") for r in caplog.records if r.name == "hwaccel"]
    assert any(e["event"] == "detector_done" and e["backend"] == "cuda" for e in events)
    assert any(e["event"] == "run_tool" for e in events)
    assert not any(r.levelno < logging.DEBUG for r in caplog.records)


def test_silent_without_logging_configuration() -> None:
    code = f"import hwaccel; hwaccel.detect(fixture={str(MACHINES / 'amd-2x-mi210-pcie')!r}, backends='cpu,rocm')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def test_dataframe(eight_gpu: hwaccel.Registry) -> None:
    pandas = pytest.importorskip("pandas")
    frame = eight_gpu.to_dataframe(host="node-1")
    assert len(frame) == 9
    assert list(frame.columns[:2]) == ["host", "id"]
    assert frame.loc[frame["id"] == "cuda:0", "pcie.max_generation"].iloc[0] == 5
    fleet = pandas.concat([eight_gpu.to_dataframe(host=h) for h in ("a", "b")])
    assert fleet.groupby("host")["memory_bytes"].sum().to_dict()["a"] == eight_gpu.to_dataframe()["memory_bytes"].sum()


def test_imports_without_pandas() -> None:
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "import hwaccel\n"
        f"r = hwaccel.detect(fixture={str(EIGHT_GPU)!r})\n"
        "try:\n    r.to_dataframe()\nexcept ImportError as e:\n    print('no pandas:', 'pandas' in str(e))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no pandas: True"


def test_capture_replays_to_what_it_saw(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "this-machine"
    seen = hwaccel.capture(out, backends=["cpu"])
    replayed = hwaccel.detect(fixture=out, backends=["cpu"])
    assert replayed.to_json(timings=False) == seen.to_json(timings=False)
    assert (out / "expected.json").read_text() == seen.to_json(pretty=True, timings=False)
    manifest = (out / "fixture.json").read_text()
    assert "accelerator(s)" in manifest and "captured with hwaccel capture" in manifest
    with pytest.raises(hwaccel.Error):
        hwaccel.capture(out)  # the folder is no longer empty


def test_telemetry(eight_gpu: hwaccel.Registry) -> None:
    t = hwaccel.telemetry(registry=eight_gpu, fixture=EIGHT_GPU)
    assert len(t.devices) == 8 and t.failed_sources == []
    assert t.device("cuda:0").utilization == 0.97
    assert t.device("cuda:6").clock_event_reasons["sw_power_cap"] is True
    assert t.device("cpu:0") is None
    assert pickle.loads(pickle.dumps(t)) == t
    broken = hwaccel.telemetry(fixture=MACHINES / "amd-2x-mi210-pcie", timeout_ms=1000)
    assert [d.source for d in broken.devices] == ["amdgpu sysfs", "amdgpu sysfs"]
    with pytest.raises(hwaccel.InvalidInput, match="timeout-ms"):
        hwaccel.telemetry(fixture=EIGHT_GPU, timeout_ms=0)
