"""Following the machine: devices added, removed, changed and health events
as they happen (docs/watch.md). A thin layer over the library's Watcher.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from . import _native
from ._registry import Registry

PathLike = Union[str, "os.PathLike[str]"]


class Watcher:
    """Detects the machine (or replays a fixture's timeline), then follows it.

    Kernel uevents and kernel log health lines re-detect only the backends
    they concern, once a burst has been quiet for ``debounce`` seconds; a full
    re-scan runs every ``interval`` seconds (0: never) for what sends no
    event. Each event is a dict: ``{"event": "added"|"removed"|"changed"|
    "health", "identity": PCI address or UUID, "id", "name", "backend",
    "fields" (for changed), "health" (for health), "change", "at"}``.

    Use it as a context manager, or call :meth:`stop`; iterating yields
    events until the watcher stops (a replayed timeline stops by itself).
    """

    __slots__ = ("_native",)

    def __init__(
        self,
        *,
        fixture: Optional[PathLike] = None,
        backends: Union[None, str, Iterable[str]] = None,
        interval: float = 30.0,
        debounce: float = 0.5,
        uevents: bool = True,
        kernel_log: bool = True,
    ) -> None:
        if backends is not None and not isinstance(backends, str):
            backends = ",".join(backends)
        self._native = _native.Watcher(
            None if fixture is None else os.fspath(fixture), backends, float(interval), float(debounce), uevents, kernel_log
        )

    def next_event(self, timeout: Optional[float] = None) -> Optional[Dict[str, Any]]:
        """The next event, waiting up to ``timeout`` seconds (None: until one
        comes); None at the timeout, or once the watcher has stopped and every
        event was taken."""
        line = self._native.next_event(timeout)
        return None if line is None else json.loads(line)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        while True:
            event = self.next_event(None if not self.finished else 0)
            if event is None:
                if self.finished:
                    return
                continue
            yield event

    @property
    def registry(self) -> Registry:
        """The registry as of the last change."""
        return Registry(self._native.registry())

    @property
    def finished(self) -> bool:
        return bool(self._native.finished)

    @property
    def sources(self) -> List[str]:
        """What it listens to ("uevent netlink socket", "/dev/kmsg", "periodic re-scan every 30 s")."""
        return list(self._native.sources)

    @property
    def unavailable(self) -> List[str]:
        """What it could not open, and why (a container often has neither source)."""
        return list(self._native.unavailable)

    @property
    def detections(self) -> int:
        return int(self._native.detections)

    def stop(self) -> None:
        """Stops following the machine; events already reported stay readable."""
        self._native.stop()

    def __enter__(self) -> "Watcher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
