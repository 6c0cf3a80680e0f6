"""Sharing a node: leases on free accelerators for a job (docs/sharing.md).
A thin layer over the library's reserve(): the same choice, lease files and
accounting as ``hwaccel run``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _native
from ._registry import Registry

PathLike = Union[str, "os.PathLike[str]"]


class Lease:
    """Devices held for this process until :meth:`release` (or the end of a
    ``with`` block, or the process). ``env`` is ``os.environ`` with the
    variables that give a runtime exactly these devices
    (``CUDA_VISIBLE_DEVICES`` by UUID, ``ROCR_VISIBLE_DEVICES``, ...): pass it
    to ``subprocess.run(cmd, env=lease.env)``."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self.devices: List[Dict[str, Any]] = list(native.devices())
        self.environment: Dict[str, str] = dict(native.environment())
        self.warnings: List[str] = list(native.warnings())
        self._cleared: List[str] = list(native.cleared_environment())

    @property
    def env(self) -> Dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in self._cleared}
        env.update(self.environment)
        return env

    @property
    def device_ids(self) -> List[str]:
        return [d["device_id"] for d in self.devices]

    def release(self) -> None:
        """Ends the lease now (idempotent)."""
        self._native.release()

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Lease({', '.join(self.device_ids)})"


def reserve(
    devices: int = 1,
    *,
    device_ids: Optional[Iterable[str]] = None,
    min_free_memory: Union[None, int, str] = None,
    max_utilization: Optional[float] = None,
    same_domain: bool = False,
    wait: Optional[float] = None,
    lease_dir: Optional[PathLike] = None,
    usage_db: Optional[PathLike] = None,
    quota: Optional[PathLike] = None,
    command: Optional[str] = None,
    registry: Optional[Registry] = None,
    fixture: Optional[PathLike] = None,
) -> Lease:
    """Leases ``devices`` free accelerators (or exactly ``device_ids``): no
    other lease holds them and, by telemetry, no other process uses them.
    ``wait`` seconds to wait for them (default: fail at once); the lease
    directory defaults to ``$HWACCEL_LEASE_DIR`` or /run/hwaccel/leases;
    ``usage_db`` accounts the lease, ``quota`` enforces a quota file.
    Raises :class:`hwaccel.Timeout` when not enough devices are free,
    :class:`hwaccel.InvalidInput` for an unknown device or a quota that refuses."""
    if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
        raise ValueError("devices must be a whole number of at least 1")
    if isinstance(min_free_memory, bool) or (isinstance(min_free_memory, int) and min_free_memory < 0):
        raise ValueError("min_free_memory must be a size (40G, 512MiB) or a number of bytes")
    if max_utilization is not None and not 0 <= max_utilization <= 1:
        raise ValueError("max_utilization must be between 0 and 1")
    request = {
        "count": devices,
        "device_ids": list(device_ids) if device_ids is not None else None,
        "min_free_memory": min_free_memory,
        "max_utilization": max_utilization,
        "same_domain": bool(same_domain),
        "wait_s": float(wait) if wait is not None else None,
        "lease_dir": os.fspath(lease_dir) if lease_dir is not None else None,
        "usage_db": os.fspath(usage_db) if usage_db is not None else None,
        "quota_file": os.fspath(quota) if quota is not None else None,
        "command": command,
    }
    native_registry = registry._native if registry is not None else None
    native = _native.reserve(native_registry, os.fspath(fixture) if fixture is not None else None, request)
    return Lease(native)


def leases(lease_dir: Optional[PathLike] = None) -> List[Dict[str, Any]]:
    """The leases held now, by device identity."""
    return list(_native.held_leases(os.fspath(lease_dir) if lease_dir is not None else ""))
