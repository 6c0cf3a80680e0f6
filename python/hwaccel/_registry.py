"""The registry and its devices, the Python way.

A ``Registry`` holds the library's registry (a C++ value); queries run in
the library. Devices, warnings, links and the system facts are read from
the registry's canonical JSON (docs/json.md) the first time they are asked
for, so that a detection costs no more than the library's own.
"""

from __future__ import annotations

import json
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Generic,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from . import _native
from ._records import Record

if TYPE_CHECKING:  # pragma: no cover
    import pandas

T = TypeVar("T")


class _Field(Generic[T]):
    """A read-only attribute read from a JSON object's field."""

    __slots__ = ("key", "default", "convert")

    def __init__(self, key: str, default: Any = None, convert: Optional[Callable[[Any], Any]] = None) -> None:
        self.key = key
        self.default = default
        self.convert = convert

    @overload
    def __get__(self, obj: None, owner: type) -> "_Field[T]": ...

    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        value = obj._data.get(self.key, self.default)
        if value is None or self.convert is None:
            return value
        return self.convert(value)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.key} is read-only")


def _copy_dict(value: Dict[str, Any]) -> Dict[str, Any]:
    return dict(value)


def _copy_list(value: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [dict(v) for v in value]


class Device:
    """One device of a registry: read-only attributes with Python types.

    Sizes are ints in bytes, rates floats; an attribute is ``None`` where the
    machine did not say. Field meanings: docs/json.md.
    """

    __slots__ = ("_data",)
    _data: Dict[str, Any]

    id: _Field[str] = _Field("id")
    backend: _Field[str] = _Field("backend")
    family: _Field[str] = _Field("family")
    index: _Field[int] = _Field("index")
    name: _Field[str] = _Field("name")
    vendor: _Field[Optional[str]] = _Field("vendor")
    uuid: _Field[Optional[str]] = _Field("uuid")
    pci_bus_id: _Field[Optional[str]] = _Field("pci_bus_id")
    numa_node: _Field[Optional[int]] = _Field("numa_node")
    cpu_affinity: _Field[Optional[str]] = _Field("cpu_affinity")
    memory_bytes: _Field[Optional[int]] = _Field("memory_bytes")
    memory_free_bytes: _Field[Optional[int]] = _Field("memory_free_bytes")
    memory_used_bytes: _Field[Optional[int]] = _Field("memory_used_bytes")
    memory_kind: _Field[str] = _Field("memory_kind")
    shared_memory_bytes: _Field[Optional[int]] = _Field("shared_memory_bytes")
    memory_bandwidth_gbps: _Field[Optional[float]] = _Field("memory_bandwidth_gbps", convert=float)
    driver_version: _Field[Optional[str]] = _Field("driver_version")
    firmware_version: _Field[Optional[str]] = _Field("firmware_version")
    compute_capability: _Field[Optional[str]] = _Field("compute_capability")
    architecture: _Field[Optional[str]] = _Field("architecture")
    compute_units: _Field[Optional[int]] = _Field("compute_units")
    pcie: _Field[Optional[Dict[str, Any]]] = _Field("pcie", convert=_copy_dict)
    power_watts: _Field[Optional[float]] = _Field("power_watts", convert=float)
    power_limit_watts: _Field[Optional[float]] = _Field("power_limit_watts", convert=float)
    temperature_c: _Field[Optional[float]] = _Field("temperature_c", convert=float)
    utilization_percent: _Field[Optional[float]] = _Field("utilization_percent", convert=float)
    integrated: _Field[bool] = _Field("integrated", False)
    available: _Field[bool] = _Field("available", True)
    visible: _Field[bool] = _Field("visible", True)
    runtime_index: _Field[Optional[int]] = _Field("runtime_index")
    partitions: _Field[List[Dict[str, Any]]] = _Field("partitions", [], _copy_list)
    spec_id: _Field[Optional[str]] = _Field("spec_id")
    properties: _Field[Dict[str, str]] = _Field("properties", {}, _copy_dict)

    def __init__(self, data: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def to_dict(self) -> Dict[str, Any]:
        """The device as the registry JSON writes it (a deep copy)."""
        copy: Dict[str, Any] = json.loads(json.dumps(self._data))
        return copy

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Device):
            return NotImplemented
        return bool(self._data == other._data)

    def __hash__(self) -> int:
        return hash((self._data.get("id"), self._data.get("uuid"), self._data.get("pci_bus_id")))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Device is read-only")

    def __repr__(self) -> str:
        parts = [f"{self.id!r}", f"{self.name!r}"]
        if self.memory_bytes is not None:
            parts.append(f"memory={self.memory_bytes / 2**30:.1f} GiB")
        if self.pci_bus_id:
            parts.append(f"pci={self.pci_bus_id}")
        if not self.available:
            parts.append("unavailable")
        if not self.visible:
            parts.append("hidden")
        return f"Device({', '.join(parts)})"

    def __getstate__(self) -> Dict[str, Any]:
        return self._data

    def __setstate__(self, state: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", state)


class DetectionWarning(Record):
    """Something a detector could not do (``backend``, ``kind``, ``message``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"DetectionWarning({self._data.get('backend')!r}, {self._data.get('kind')!r}, {self._data.get('message')!r})"


class Link(Record):
    """A link between two devices (``a``, ``b``, ``kind``: nvlink, xgmi, pcie_switch...)."""

    __slots__ = ()


class Interconnect(Record):
    """A fabric joining several devices (NVSwitch, xGMI hive, TPU ICI...)."""

    __slots__ = ()


class SystemInfo(Record):
    """Host facts: ``cpu``, ``environment``, ``storage``, ``network``."""

    __slots__ = ()


class Requirement:
    """What a workload needs: ``min_devices`` devices of ``device_class``, each
    available, visible and meeting every condition that is set. A condition on
    something a detector did not learn is not met.

    device_class: any_accelerator, gpu, tpu, gaudi, aws_neuron, gpu_or_tpu,
    npu or any (the CPU counts).
    """

    __slots__ = ("device_class", "min_devices", "min_memory_bytes", "min_compute_capability", "dtype")

    def __init__(
        self,
        device_class: str = "any_accelerator",
        min_devices: int = 1,
        min_memory_bytes: Optional[int] = None,
        min_compute_capability: Optional[str] = None,
        dtype: Optional[str] = None,
    ) -> None:
        self.device_class = device_class
        self.min_devices = min_devices
        self.min_memory_bytes = min_memory_bytes
        self.min_compute_capability = min_compute_capability
        self.dtype = dtype

    def _fields(self) -> Tuple[Any, ...]:
        return (self.device_class, self.min_devices, self.min_memory_bytes, self.min_compute_capability, self.dtype)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        names = ("device_class", "min_devices", "min_memory_bytes", "min_compute_capability", "dtype")
        return "Requirement(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields()) if v is not None) + ")"

    def __getstate__(self) -> Tuple[Any, ...]:
        return self._fields()

    def __setstate__(self, state: Tuple[Any, ...]) -> None:
        (self.device_class, self.min_devices, self.min_memory_bytes, self.min_compute_capability, self.dtype) = state


DeviceRef = Union[str, Device]


def _device_id(ref: DeviceRef) -> str:
    if isinstance(ref, Device):
        return ref.id
    if isinstance(ref, str):
        return ref
    raise TypeError(f"a device is named by its id or a Device, not {type(ref).__name__}")


class Registry:
    """The devices, links and host facts of one detection, with queries.

    Build one with :func:`hwaccel.detect`, :meth:`Registry.from_json` or
    :func:`hwaccel.hypothetical`. It is a value: it never changes; the
    what-if methods return new registries.
    """

    __slots__ = ("_native", "_document", "_devices")

    def __init__(self, native: _native.Registry) -> None:
        self._native = native
        self._document: Optional[Dict[str, Any]] = None
        self._devices: Optional[List[Device]] = None

    # --- the JSON view, read on first use -------------------------------------

    def _doc(self) -> Dict[str, Any]:
        if self._document is not None:
            return self._document
        document: Dict[str, Any] = json.loads(self._native.to_json(False, True))
        self._document = document
        return document

    def _device_list(self) -> List[Device]:
        if self._devices is None:
            self._devices = [Device(d) for d in self._doc().get("devices", [])]
        return self._devices

    def _by_ids(self, ids: Iterable[str]) -> List[Device]:
        by_id = {d.id: d for d in self._device_list()}
        return [by_id[i] for i in ids]

    @property
    def devices(self) -> List[Device]:
        """Every device, in registry order (accelerators and the CPU)."""
        return list(self._device_list())

    @property
    def warnings(self) -> List[DetectionWarning]:
        return [DetectionWarning(w) for w in self._doc().get("warnings", [])]

    @property
    def links(self) -> List[Link]:
        return [Link(x) for x in self._doc().get("links", [])]

    @property
    def interconnects(self) -> List[Interconnect]:
        return [Interconnect(x) for x in self._doc().get("interconnects", [])]

    @property
    def system(self) -> SystemInfo:
        return SystemInfo(self._doc().get("system", {}))

    @property
    def timings(self) -> Dict[str, float]:
        """Seconds each backend took (absent in registries read from JSON without them)."""
        return {t["name"]: t["elapsed_us"] / 1e6 for t in self._doc().get("timings", [])}

    @property
    def schema_version(self) -> int:
        return int(self._doc().get("schema_version", _native.registry_schema_version))

    # --- queries (run in the library) -----------------------------------------

    def best(self) -> Optional[Device]:
        """The most capable available, visible device (an accelerator before the
        CPU; then the most usable memory, then bandwidth); None when none is available."""
        best_id = self._native.best_id()
        return None if best_id is None else self._by_ids([best_id])[0]

    def available(self) -> List[Device]:
        """Devices that are available and visible to this process."""
        return self._by_ids(self._native.available_ids())

    def by_family(self, family: str) -> List[Device]:
        """Devices of a family: cpu, gpu, npu, tpu or asic."""
        return self._by_ids(self._native.family_ids(family))

    def satisfying(self, requirement: Optional[Requirement] = None, **conditions: Any) -> List[Device]:
        """The devices meeting a requirement (a :class:`Requirement`, or its
        fields as keywords); empty when fewer than ``min_devices`` do."""
        if requirement is None:
            requirement = Requirement(**conditions)
        elif conditions:
            raise TypeError("give a Requirement or keyword conditions, not both")
        r = requirement
        return self._by_ids(
            self._native.satisfying_ids(
                r.device_class, r.min_devices, r.min_memory_bytes, r.min_compute_capability, r.dtype
            )
        )

    def has_accelerator(self) -> bool:
        """Whether an available, visible non-CPU device exists."""
        return bool(self._native.has_accelerator())

    def total_memory(self, *, include_cpu: bool = False) -> int:
        """Usable memory in bytes summed over the available accelerators; with
        ``include_cpu``, plus the host's memory (unified memory counted once)."""
        if include_cpu:
            return int(self._native.total_memory_including_cpu())
        return int(self._native.total_accelerator_memory())

    # --- what-if analysis -------------------------------------------------------

    def what_if_add(self, devices: Union[str, Device, Iterable[Device]]) -> "Registry":
        """A new registry with devices added: hypothetical ones from the spec
        table (``"2xH100-SXM-80GB"``, see :func:`hwaccel.specs`) or Device
        objects (their ids are kept unless empty or taken)."""
        if isinstance(devices, str):
            return Registry(self._native.what_if_add_spec(devices))
        items = [devices] if isinstance(devices, Device) else list(devices)
        for d in items:
            if not isinstance(d, Device):
                raise TypeError(f"what_if_add takes a spec string or Device objects, not {type(d).__name__}")
        return Registry(self._native.what_if_add_devices(json.dumps([d._data for d in items])))

    def what_if_remove(self, devices: Union[DeviceRef, Iterable[DeviceRef]]) -> "Registry":
        """A new registry without these devices (ids or Device objects), their
        links and their places in interconnects."""
        refs = [devices] if isinstance(devices, (str, Device)) else list(devices)
        return Registry(self._native.what_if_remove([_device_id(r) for r in refs]))

    # --- serialisation ------------------------------------------------------------

    def to_json(self, *, pretty: bool = False, timings: bool = True) -> str:
        """The canonical registry JSON (docs/json.md), as ``hwaccel detect`` prints it."""
        return str(self._native.to_json(pretty, timings))

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "Registry":
        """Reads what :meth:`to_json` (or ``hwaccel detect``) wrote; a malformed
        document raises :class:`hwaccel.ParseError` naming the field."""
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return cls(_native.registry_from_json(text))

    def to_dict(self) -> Dict[str, Any]:
        """The registry JSON as plain dicts and lists."""
        document: Dict[str, Any] = json.loads(self._native.to_json(False, True))
        return document

    def with_host(self, host: str) -> "Registry":
        """The same registry naming its node ``host`` (``system.host``, what
        ``hwaccel detect --host`` sets), for a fleet scan that keys nodes by it."""
        document = self.to_dict()
        document.setdefault("system", {})["host"] = host
        return Registry.from_json(json.dumps(document))

    def summary(self) -> Dict[str, Any]:
        """The compact summary (``hwaccel summary``; docs/summary.schema.json)."""
        document: Dict[str, Any] = json.loads(self._native.summary_json(False))
        return document

    def to_dataframe(self, *, host: Optional[str] = None) -> "pandas.DataFrame":
        """One row per device, nested fields flattened (``pcie.max_generation``,
        ``properties.ecc``); a ``host`` column when given. Needs pandas."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("Registry.to_dataframe needs pandas (pip install pandas, or apt install python3-pandas)") from e
        rows = [d._data for d in self._device_list()]
        frame = pandas.json_normalize(rows, sep=".") if rows else pandas.DataFrame(columns=["id"])
        if host is not None:
            frame.insert(0, "host", host)
        return frame

    # --- Python protocols -----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._device_list())

    def __iter__(self) -> Iterator[Device]:
        return iter(list(self._device_list()))

    def __getitem__(self, device_id: str) -> Device:
        for d in self._device_list():
            if d.id == device_id:
                return d
        raise KeyError(device_id)

    def __contains__(self, device: object) -> bool:
        if isinstance(device, Device):
            return device in self._device_list()
        return any(d.id == device for d in self._device_list())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Registry):
            return NotImplemented
        return bool(self._native == other._native)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        devices = self._device_list()
        accelerators = [d for d in devices if d.family != "cpu"]
        names: Dict[str, int] = {}
        for d in accelerators:
            names[d.name] = names.get(d.name, 0) + 1
        shown = ", ".join(f"{n}x {name}" for name, n in names.items()) or "no accelerator"
        warnings = len(self._doc().get("warnings", []))
        return f"<hwaccel.Registry: {shown}; {len(devices)} device(s), {warnings} warning(s)>"

    def __getstate__(self) -> str:
        return self.to_json()

    def __setstate__(self, state: str) -> None:
        self._native = _native.registry_from_json(state)
        self._document = None
        self._devices = None
