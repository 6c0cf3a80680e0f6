"""Read-only records over the library's canonical JSON documents.

Plans, training estimates, recommendations, specs and catalogue models are
JSON documents the library writes (docs/json.md, docs/planning.md,
docs/training.md). A record gives their fields as attributes, nested objects
as records and arrays as lists, and ``to_dict()`` gives the document back;
records compare by content and pickle.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterator, List, Mapping


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Record:
    """A JSON object with its fields as read-only attributes (``plan.memory.total_bytes``)."""

    __slots__ = ("_data",)
    _data: Dict[str, Any]

    def __init__(self, data: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r} (fields: {', '.join(self._data)})"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> List[str]:
        return sorted(set(self._data) | {"to_dict", "to_json", "get"})

    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key``, or ``default`` when the document leaves it out."""
        return _wrap(self._data[key]) if key in self._data else default

    def to_dict(self) -> Dict[str, Any]:
        """The document as plain dicts and lists (a deep copy)."""
        return copy.deepcopy(self._data)

    def to_json(self, *, indent: int | None = None) -> str:
        import json

        return json.dumps(self._data, indent=indent)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return type(self) is type(other) and self._data == other._data

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self._data))))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._data.items() if not isinstance(v, (dict, list)))
        return f"{type(self).__name__}({shown})"

    def __getstate__(self) -> Dict[str, Any]:
        return self._data

    def __setstate__(self, state: Dict[str, Any]) -> None:
        object.__setattr__(self, "_data", state)


class Plan(Record):
    """How a model runs on a set of devices (``hwaccel plan``; docs/planning.md)."""

    __slots__ = ()

    @property
    def fits(self) -> bool:
        return bool(self._data["fits"])

    def __repr__(self) -> str:
        model = self._data.get("model", {})
        strategy = self._data.get("strategy", {})
        return (
            f"Plan(model={model.get('name')!r}, quantization={self._data.get('quantization', {}).get('level')!r}, "
            f"strategy={strategy.get('name')!r}, fits={self._data.get('fits')!r})"
        )


class TrainingEstimate(Record):
    """Training memory per device (``hwaccel train``; docs/training.md)."""

    __slots__ = ()


class Recommendation(Record):
    """Cloud instances a model fits on, cheapest first (``hwaccel recommend``)."""

    __slots__ = ()


class Spec(Record):
    """A published device specification (``hwaccel specs``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Spec(id={self._data.get('id')!r}, name={self._data.get('name')!r})"


class CatalogueModel(Record):
    """A model of the built-in catalogue (``hwaccel models``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"CatalogueModel(id={self._data.get('id')!r}, params={self._data.get('params')!r})"


class Telemetry(Record):
    """What the devices are doing now (``hwaccel metrics --json``; docs/metrics.md):
    ``devices`` (utilization, memory, temperatures, power, clocks, ECC...),
    ``host``, ``warnings`` and ``failed_sources``."""

    __slots__ = ()

    def device(self, device_id: str) -> Any:
        """The telemetry of one device by its registry id, or None."""
        for d in self._data.get("devices", []):
            if d.get("device_id") == device_id:
                return Record(d)
        return None
