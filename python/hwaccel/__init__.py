"""hwaccel: every AI accelerator on this machine, what it can do, and how a
model should run on it.

    >>> import hwaccel
    >>> registry = hwaccel.detect()
    >>> registry.best()
    >>> hwaccel.plan("llama-3.1-8b", registry=registry).fits

The package is a thin layer over the C++ library (the same detection,
planning and training arithmetic as the ``hwaccel`` command, which
``python -m hwaccel`` runs). docs/python.md is the guide.
"""

from __future__ import annotations

import _thread
import os
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from . import _native
from ._errors import (
    Error,
    EscapesRoot,
    InvalidInput,
    IoError,
    NotCaptured,
    NotFound,
    NotRegularFile,
    ParseError,
    PermissionDenied,
    SymlinkLoop,
    Timeout,
    ToolFailed,
    ToolNotFound,
    Unsupported,
)
from ._fleet import Fleet, FleetNode, FleetStore, ScanRecord, nfd_labels, scan_files, scan_hosts, scan_lines, slurm_config
from ._watch import Watcher
from ._lease import Lease, leases, reserve
from ._records import CatalogueModel, Plan, Recommendation, Record, Spec, Telemetry, TrainingEstimate

# Isolated plugins run in hwaccel-plugin-host, which a wheel keeps beside the
# CLI in the package; the library finds it through this variable, and so do
# the hwaccel commands this process starts (docs/plugins.md).
_packaged_plugin_host = os.path.join(os.path.dirname(__file__), "bin", "hwaccel-plugin-host")
if "HWACCEL_PLUGIN_HOST" not in os.environ and os.access(_packaged_plugin_host, os.X_OK):
    os.environ["HWACCEL_PLUGIN_HOST"] = _packaged_plugin_host
from ._registry import (
    DetectionWarning,
    Device,
    Interconnect,
    Link,
    Registry,
    Requirement,
    SystemInfo,
)

__version__: str = _native.version()

__all__ = [
    "__version__",
    "detect",
    "hypothetical",
    "cached",
    "CachedRegistry",
    "plan",
    "train",
    "recommend",
    "specs",
    "models",
    "capture",
    "telemetry",
    "metrics",
    "scan_files",
    "scan_lines",
    "scan_hosts",
    "nfd_labels",
    "slurm_config",
    "Fleet",
    "Watcher",
    "reserve",
    "leases",
    "Lease",
    "FleetNode",
    "FleetStore",
    "ScanRecord",
    "Registry",
    "Device",
    "DetectionWarning",
    "Link",
    "Interconnect",
    "SystemInfo",
    "Requirement",
    "Record",
    "Plan",
    "TrainingEstimate",
    "Recommendation",
    "Spec",
    "CatalogueModel",
    "Telemetry",
    "Error",
    "NotFound",
    "PermissionDenied",
    "IoError",
    "NotRegularFile",
    "EscapesRoot",
    "SymlinkLoop",
    "ToolNotFound",
    "ToolFailed",
    "Timeout",
    "NotCaptured",
    "ParseError",
    "InvalidInput",
    "Unsupported",
]

PathLike = Union[str, "os.PathLike[str]"]
Model = Union[str, int, "os.PathLike[str]"]


def _path(value: Optional[PathLike], argument: str) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"{argument}: a path, not {type(value).__name__}")


def _backend_list(backends: Union[None, str, Iterable[str]]) -> Optional[str]:
    if backends is None or isinstance(backends, str):
        return backends
    return ",".join(backends)


def detect(
    *,
    fixture: Optional[PathLike] = None,
    backends: Union[None, str, Iterable[str]] = None,
    timeout_ms: Optional[int] = None,
    system_probes: bool = True,
) -> Registry:
    """Detects this machine (or replays a captured fixture folder).

    backends: names (``["cuda", "cpu"]`` or ``"cuda,cpu"``; default every
    backend, or ``$HWACCEL_BACKENDS``); timeout_ms: the deadline of each
    vendor tool; system_probes: also read storage, network and environment.
    The GIL is released while detecting, so threads detect in parallel.
    Diagnostic events go to the ``hwaccel`` logger when it is enabled
    (docs/python.md, "Logging").
    """
    from ._logging import emit, wanted_level

    level = wanted_level()
    native, events = _native.detect(
        _path(fixture, "fixture"),
        {"backends": _backend_list(backends), "timeout_ms": timeout_ms, "system_probes": system_probes, "log_level": level},
    )
    if events:
        emit(events)
    return Registry(native)


def hypothetical(devices: str) -> Registry:
    """A registry of devices from the spec table: ``"8xH100-SXM-80GB"``,
    ``"2xRTX-4090+1xRTX-3090"`` (see :func:`specs`)."""
    return Registry(_native.hypothetical(devices))


class CachedRegistry:
    """A registry detected at most once per ``ttl`` seconds and shared by every
    thread (the library's CachedRegistry: one detection at a time, the others
    wait for it)."""

    __slots__ = ("_native",)

    def __init__(
        self,
        ttl: float = 300.0,
        *,
        backends: Union[None, str, Iterable[str]] = None,
        timeout_ms: Optional[int] = None,
        system_probes: bool = True,
    ) -> None:
        if ttl < 0:
            raise InvalidInput(f"ttl: {ttl} is negative")
        self._native = _native.CachedRegistry(
            int(ttl * 1000), {"backends": _backend_list(backends), "timeout_ms": timeout_ms, "system_probes": system_probes}
        )

    def get(self) -> Registry:
        """The cached registry, detected afresh when older than the TTL."""
        return Registry(self._native.get())

    def invalidate(self) -> None:
        """Forgets the cached registry: the next get() detects."""
        self._native.invalidate()

    @property
    def detections(self) -> int:
        """How many times this cache has detected."""
        return int(self._native.detections)

    @property
    def ttl(self) -> float:
        return float(self._native.ttl_ms) / 1000.0


_caches: Dict[Tuple[Any, ...], CachedRegistry] = {}
# _thread's lock is threading.Lock without importing threading (2.5 ms of import time).
_caches_lock = _thread.allocate_lock()


def cached(
    ttl: float = 300.0,
    *,
    backends: Union[None, str, Iterable[str]] = None,
    timeout_ms: Optional[int] = None,
    system_probes: bool = True,
) -> Registry:
    """This machine's registry, detected at most once per ``ttl`` seconds for
    each set of options, shared by the whole process."""
    key = (float(ttl), _backend_list(backends), timeout_ms, system_probes)
    with _caches_lock:
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = CachedRegistry(ttl, backends=backends, timeout_ms=timeout_ms, system_probes=system_probes)
    return cache.get()


def _planning_registry(
    devices: Optional[str],
    fixture: Optional[PathLike],
    registry: Optional[Registry],
) -> Optional[_native.Registry]:
    """What to plan on when no devices are named: the registry, the fixture
    or this machine (None with devices: the library makes them)."""
    given = [name for name, v in (("devices", devices), ("fixture", fixture), ("registry", registry)) if v is not None]
    if len(given) > 1:
        raise InvalidInput(f"give at most one of devices, fixture and registry (got {' and '.join(given)})")
    if registry is not None:
        if not isinstance(registry, Registry):
            raise TypeError(f"registry: a hwaccel.Registry, not {type(registry).__name__}")
        return registry._native
    if devices is not None:
        return None
    return _native.machine_registry(_path(fixture, "fixture"))


def _model(model: Model) -> Union[str, int]:
    if isinstance(model, os.PathLike):
        return os.fspath(model)
    if isinstance(model, (str, int)):
        return model
    raise TypeError(f"model: a catalogue id, a path or a parameter count, not {type(model).__name__}")


# Settings left as None take the library's defaults (docs/python.md,
# "Settings"); every value is checked by the library's settings tables, as
# the command's options and the C API's request keys are, with the same
# error text.


def plan(
    model: Model,
    *,
    devices: Optional[str] = None,
    fixture: Optional[PathLike] = None,
    registry: Optional[Registry] = None,
    quant: Optional[str] = None,
    context: Optional[int] = None,
    batch: Optional[int] = None,
    kv_dtype: Optional[str] = None,
    reserve: Optional[float] = None,
    objective: Optional[str] = None,
    formats: Optional[str] = None,
    offload: Optional[bool] = None,
    nodes: Optional[int] = None,
    fabric: Optional[str] = None,
    expert_parallel: Optional[bool] = None,
    runtime: Optional[str] = None,
    input_len: Optional[int] = None,
    output_len: Optional[int] = None,
    device_specs: Optional[PathLike] = None,
    flash_attention: Optional[bool] = None,
    runtime_profiles: Optional[PathLike] = None,
    power_cap: Optional[float] = None,
    min_tokens_per_s: Optional[float] = None,
) -> Plan:
    """How a model runs: quantization, memory, sharding, throughput, launch
    flags (``hwaccel plan``). The model is a catalogue id, a path (config.json,
    .gguf, .safetensors, a folder) or a parameter count (``70_000_000_000``,
    ``"70B"``). It is planned on ``devices`` (hypothetical, ``"8xH100-SXM-80GB"``,
    or nodes of them, ``"2x(8xH100-SXM-80GB)"``), a ``fixture``, a
    ``registry``, or else this machine; ``nodes`` copies that node, ``fabric``
    (``"ib-8x400g"``) joins several nodes, and ``expert_parallel`` spreads a
    MoE model's experts over each tensor-parallel group. ``runtime``
    (``"llama.cpp-cuda"``, ``"vllm"``, ...) picks the speed profile, and
    ``input_len`` with ``output_len`` gives a server's throughput, TTFT and
    TPOT for ``batch`` requests of that shape (``throughput["serving"]``; the
    context is then their sum unless given). Defaults: context 4096, batch 1,
    reserve 0.1, objective ``"throughput"``, offload on, the best level that
    fits. ``device_specs`` (default ``$HWACCEL_DEVICE_SPECS``) is a file of
    devices the spec table lacks: names for ``devices`` and figures for
    matched ones. ``flash_attention`` is llama.cpp's ``-fa`` (default off, as
    the llama.cpp profiles' calibration runs): on, each KV head is read once
    per token. ``runtime_profiles`` (default ``$HWACCEL_RUNTIME_PROFILES``) is
    a runtime-profile file (data/runtime-profiles.json's format) used in place
    of the built-in profiles. ``power_cap`` is each device's cap in watts
    (default: the cap it enforces, else its TDP); the plan's ``power`` gives
    watts, joules per output token and per request. ``objective="energy"``
    picks the layout with the least energy per token that reaches
    ``min_tokens_per_s``."""
    native_registry = _planning_registry(devices, fixture, registry)
    settings: Dict[str, Any] = {
        "devices": devices,
        "quant": quant,
        "context": context,
        "batch": batch,
        "kv_dtype": kv_dtype,
        "reserve": reserve,
        "objective": objective,
        "formats": formats,
        "offload": offload,
        "nodes": nodes,
        "fabric": fabric,
        "expert_parallel": expert_parallel,
        "runtime": runtime,
        "input_len": input_len,
        "output_len": output_len,
        "device_specs": _path(device_specs, "device_specs"),
        "flash_attention": flash_attention,
        "runtime_profiles": _path(runtime_profiles, "runtime_profiles"),
        "power_cap": power_cap,
        "min_tokens_per_s": min_tokens_per_s,
    }
    document = _native.plan(native_registry, _model(model), settings)
    import json

    return Plan(json.loads(document))


def train(
    model: Model,
    *,
    method: str,
    devices: Optional[str] = None,
    fixture: Optional[PathLike] = None,
    registry: Optional[Registry] = None,
    adapter: Optional[str] = None,
    optimizer: Optional[str] = None,
    precision: Optional[str] = None,
    zero: Union[None, int, str] = None,
    offload: Optional[str] = None,
    dp: Optional[int] = None,
    tp: Optional[int] = None,
    pp: Optional[int] = None,
    sequence_parallel: Optional[bool] = None,
    micro_batch: Optional[int] = None,
    seq: Optional[int] = None,
    micro_batches: Optional[int] = None,
    recompute: Optional[str] = None,
    attention: Optional[str] = None,
    dropout: Optional[bool] = None,
    lora_rank: Optional[int] = None,
    lora_targets: Union[None, str, Iterable[str]] = None,
    qlora_bits: Optional[int] = None,
    double_quant: Optional[bool] = None,
    base_quant: Optional[str] = None,
    frozen_quant: Optional[str] = None,
    prefix_length: Optional[int] = None,
    prefix_projection: Optional[int] = None,
    teacher: Optional[Model] = None,
    reward_model: Optional[Model] = None,
    reserve: Optional[float] = None,
    nodes: Optional[int] = None,
    fabric: Optional[str] = None,
    device_specs: Optional[PathLike] = None,
) -> TrainingEstimate:
    """Training memory per device by method, precision, optimizer and sharding,
    checked against the devices (``hwaccel train``; the same options, named
    the Python way, with the same defaults: adamw, bf16 mixed precision, ZeRO
    stage 0, no offload, dp = tp = pp = 1, micro-batch 1, 2048 tokens, flash
    attention). method: full, lora, qlora, prefix, dpo, rlhf or distill."""
    native_registry = _planning_registry(devices, fixture, registry)
    settings: Dict[str, Any] = {
        "devices": devices,
        "method": method,
        "adapter": adapter,
        "optimizer": optimizer,
        "precision": precision,
        "zero": zero,
        "offload": offload,
        "dp": dp,
        "tp": tp,
        "pp": pp,
        "sequence_parallel": sequence_parallel,
        "micro_batch": micro_batch,
        "seq": seq,
        "micro_batches": micro_batches,
        "recompute": recompute,
        "attention": attention,
        "dropout": dropout,
        "lora_rank": lora_rank,
        "lora_targets": lora_targets if lora_targets is None or isinstance(lora_targets, str) else list(lora_targets),
        "qlora_bits": qlora_bits,
        "double_quant": double_quant,
        "base_quant": base_quant,
        "frozen_quant": frozen_quant,
        "prefix_length": prefix_length,
        "prefix_projection": prefix_projection,
        "reserve": reserve,
        "nodes": nodes,
        "fabric": fabric,
        "device_specs": _path(device_specs, "device_specs"),
    }
    document = _native.train(
        native_registry,
        _model(model),
        settings,
        None if teacher is None else _model(teacher),
        None if reward_model is None else _model(reward_model),
    )
    import json

    return TrainingEstimate(json.loads(document))


def recommend(
    model: Model,
    *,
    quant: str,
    context: Optional[int] = None,
    batch: Optional[int] = None,
    kv_dtype: Optional[str] = None,
    reserve: Optional[float] = None,
    providers: Optional[Iterable[str]] = None,
    catalogue: Optional[PathLike] = None,
    max_instances: Optional[int] = None,
    device_specs: Optional[PathLike] = None,
    runtime_profiles: Optional[PathLike] = None,
    power_budget: Optional[float] = None,
) -> Recommendation:
    """The cheapest cloud instances a model fits on (``hwaccel recommend``);
    the catalogue file defaults to ``$HWACCEL_INSTANCE_CATALOGUE``, else the
    built-in one; ``device_specs`` (default ``$HWACCEL_DEVICE_SPECS``) names
    devices a user catalogue may use; ``runtime_profiles`` (default
    ``$HWACCEL_RUNTIME_PROFILES``) replaces the built-in runtime profiles;
    ``power_budget`` (kW) rejects instances whose accelerators draw more."""
    settings: Dict[str, Any] = {
        "quant": quant,
        "context": context,
        "batch": batch,
        "kv_dtype": kv_dtype,
        "reserve": reserve,
        "provider": None if providers is None else list(providers),
        "catalogue": _path(catalogue, "catalogue"),
        "max_instances": max_instances,
        "device_specs": _path(device_specs, "device_specs"),
        "runtime_profiles": _path(runtime_profiles, "runtime_profiles"),
        "power_budget": power_budget,
    }
    document = _native.recommend(_model(model), settings)
    import json

    return Recommendation(json.loads(document))


def specs(device_specs: Optional[PathLike] = None) -> List[Spec]:
    """The published device specs ``devices=`` accepts (``hwaccel specs``),
    then the entries of a user device-spec file (``device_specs``, default
    ``$HWACCEL_DEVICE_SPECS``), each with ``user_file`` in its fields."""
    import json

    document = _native.specs_json({"device_specs": _path(device_specs, "device_specs")})
    return [Spec(s) for s in json.loads(document)]


def models() -> List[CatalogueModel]:
    """The built-in model catalogue (``hwaccel models``)."""
    import json

    return [CatalogueModel(m) for m in json.loads(_native.models_json())]


def telemetry(
    *,
    registry: Optional[Registry] = None,
    fixture: Optional[PathLike] = None,
    timeout_ms: Optional[int] = None,
) -> Telemetry:
    """Reads what the devices are doing now: utilization, memory in use,
    temperatures, power, clocks, ECC and throttle reasons (docs/metrics.md).
    The devices are the registry's (detected now when not given); a fixture
    replays a captured machine. A source that fails is in ``failed_sources``
    and ``warnings``; nothing raises for what the machine holds."""
    native_registry = registry._native if registry is not None else None
    _, sample = _native.sample_telemetry(native_registry, _path(fixture, "fixture"), {"timeout_ms": timeout_ms})
    import json

    return Telemetry(json.loads(sample.to_json()))


def metrics(
    *,
    registry: Optional[Registry] = None,
    fixture: Optional[PathLike] = None,
    timeout_ms: Optional[int] = None,
    openmetrics: bool = False,
) -> str:
    """One telemetry sample as Prometheus metrics (``hwaccel metrics``), or
    OpenMetrics; for a process that serves its own /metrics."""
    native_registry = registry._native if registry is not None else None
    detected, sample = _native.sample_telemetry(native_registry, _path(fixture, "fixture"), {"timeout_ms": timeout_ms})
    return str(_native.metrics_text(detected, sample, openmetrics))


def capture(
    path: PathLike,
    *,
    machine: Optional[str] = None,
    backends: Union[None, str, Iterable[str]] = None,
    timeout_ms: Optional[int] = None,
) -> Registry:
    """Records this machine into a fixture folder that replays it exactly
    (``hwaccel capture --out PATH``): fixture.json, root/, commands/ and
    expected.json. Returns the registry detected while recording."""
    import datetime
    import socket

    out = _path(path, "path")
    assert out is not None
    source = "captured with hwaccel capture {} on {} at {}".format(
        __version__,
        socket.gethostname() or "unknown-host",
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    native = _native.capture(out, machine or "", source, {"backends": _backend_list(backends), "timeout_ms": timeout_ms})
    registry = Registry(native)
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        f.write(registry.to_json(pretty=True, timings=False))
    return registry

