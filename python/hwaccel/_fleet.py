"""Fleets: one registry per node, scans kept in SQLite, and what changed
(docs/fleet.md). A thin layer over the library's fleet module: documents
cross as the fleet document's JSON and come back as objects here.
"""

from __future__ import annotations

import datetime
import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import _native
from ._records import Record
from ._registry import Registry

PathLike = Union[str, "os.PathLike[str]"]


class FleetNode:
    """One node of a scan: its registry, or the error that stands for it."""

    __slots__ = ("host", "scanned_at", "source", "elapsed_ms", "registry", "error")

    def __init__(self, document: Dict[str, Any]) -> None:
        self.host: str = document["host"]
        self.scanned_at: str = document["scanned_at"]
        self.source: str = document["source"]
        self.elapsed_ms: int = document["elapsed_ms"]
        self.registry: Optional[Registry] = (
            Registry.from_json(json.dumps(document["registry"])) if "registry" in document else None
        )
        self.error: Optional[Record] = Record(document["error"]) if "error" in document else None

    @property
    def answered(self) -> bool:
        """Whether the node gave a registry."""
        return self.registry is not None

    def __repr__(self) -> str:
        state = "ok" if self.registry is not None else f"error {self.error.kind if self.error else '?'}"
        return f"FleetNode({self.host!r}, {state})"


class Fleet:
    """A scan: nodes sorted by host, totals by model, spec and backend, and
    the warnings that belong to no node. Compares by content and pickles."""

    __slots__ = ("_json", "_document")
    _json: str
    _document: Optional[Dict[str, Any]]

    def __init__(self, document_json: str) -> None:
        self._json = document_json
        self._document = None

    def _doc(self) -> Dict[str, Any]:
        # Parsed once, on first use: every view below reads the same document.
        if self._document is None:
            self._document = json.loads(self._json)
        return self._document

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "Fleet":
        """Reads a fleet document (or one node's registry, as a fleet of one);
        a malformed one raises :class:`hwaccel.ParseError`."""
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return cls(_native.fleet_normalize(text))

    def to_json(self) -> str:
        """The canonical fleet document (docs/fleet.schema.json)."""
        return self._json

    def to_dict(self) -> Dict[str, Any]:
        """The fleet document as plain dicts and lists (a fresh copy)."""
        document: Dict[str, Any] = json.loads(self._json)
        return document

    @property
    def scanned_at(self) -> str:
        return str(self._doc()["scanned_at"])

    @property
    def nodes(self) -> List[FleetNode]:
        return [FleetNode(n) for n in self._doc()["nodes"]]

    @property
    def totals(self) -> Record:
        """``nodes``, ``nodes_answered``, ``accelerators``, ``accelerator_memory_bytes``
        and ``by_model``/``by_spec``/``by_backend`` counts."""
        return Record(self._doc()["totals"])

    @property
    def warnings(self) -> List[str]:
        return list(self._doc()["warnings"])

    def __getitem__(self, host: str) -> FleetNode:
        for node in self._doc()["nodes"]:
            if node["host"] == host:
                return FleetNode(node)
        raise KeyError(host)

    def __iter__(self) -> Iterator[FleetNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self._doc()["nodes"])

    def diff(self, later: "Fleet") -> Record:
        """What changed from this scan to ``later``: ``nodes`` (added, gone,
        stopped_answering, answering_again) and ``devices`` (added, removed,
        changed with the fields), devices matched by PCI address or UUID."""
        return Record(json.loads(_native.fleet_diff(self._json, later._json)))

    def check(self, baseline: "Fleet", *, versions: bool = False) -> List[Tuple[str, str]]:
        """The nodes of ``baseline`` that this scan finds different, as
        ``(host, message)``; empty when every node matches."""
        return list(_native.fleet_check(baseline._json, self._json, versions))

    def place(
        self,
        workloads: Union[str, Iterable[Mapping[str, Any]]],
        *,
        busy: Union[None, str, Iterable[str]] = None,
        fabric: Optional[str] = None,
        exact_max: Optional[int] = None,
        device_specs: Optional[PathLike] = None,
        runtime_profiles: Optional[PathLike] = None,
        power_budget: Optional[float] = None,
        node_power_budget: Optional[float] = None,
    ) -> Record:
        """Places model replicas on this fleet's nodes (``hwaccel place``;
        docs/planning.md, "Placement"): ``workloads`` is a workloads document
        or a list of ``{"model", "replicas", "quantization", ...}`` entries;
        ``busy`` names taken nodes or ``host/device`` ids (or an earlier
        result's JSON, or a file of either); ``exact_max`` (default 12) is the
        largest instance searched exactly; ``runtime_profiles`` is a
        runtime-profile file each replica's plan uses in place of the built-in
        profiles (as ``plan``'s); ``power_budget`` and
        ``node_power_budget`` (kW) cap what the placed replicas draw on the
        fleet and on each node. The result has ``placed`` (each with its
        ``watts``), ``unplaced`` (with reasons), ``nodes_used``,
        ``lower_bound``, ``method`` and ``search_complete``."""
        document = workloads if isinstance(workloads, str) else json.dumps({"workloads": [dict(w) for w in workloads]})
        settings: Dict[str, Any] = {"busy": _busy_text(busy), "fabric": fabric, "exact_max": exact_max,
                    "device_specs": None if device_specs is None else os.fspath(device_specs),
                    "runtime_profiles": None if runtime_profiles is None else os.fspath(runtime_profiles),
                    "power_budget": power_budget, "node_power_budget": node_power_budget}
        return Record(json.loads(_native.fleet_place(self._json, document, settings)))

    def what_is_missing(
        self,
        model: Union[str, int, "os.PathLike[str]"],
        *,
        quant: Optional[str] = None,
        context: Optional[int] = None,
        batch: Optional[int] = None,
        kv_dtype: Optional[str] = None,
        reserve: Optional[float] = None,
        node_kind: Optional[str] = None,
        busy: Union[None, str, Iterable[str]] = None,
        fabric: Optional[str] = None,
        max_nodes: Optional[int] = None,
        device_specs: Optional[PathLike] = None,
    ) -> Record:
        """How many nodes of one kind (``node_kind``, default the fleet's
        most common) the model needs against this fleet's free ones
        (``hwaccel plan --what-is-missing``): ``nodes_needed``,
        ``nodes_free``, ``nodes_missing``, ``summary`` and the ``plan``
        (defaults as ``hwaccel.plan``'s; ``max_nodes`` 4096)."""
        target = os.fspath(model) if isinstance(model, os.PathLike) else model
        settings: Dict[str, Any] = {
            "quant": quant,
            "context": context,
            "batch": batch,
            "kv_dtype": kv_dtype,
            "reserve": reserve,
            "node_kind": node_kind,
            "busy": _busy_text(busy),
            "fabric": fabric,
            "max_nodes": max_nodes,
            "device_specs": None if device_specs is None else os.fspath(device_specs),
        }
        document = _native.fleet_what_is_missing(self._json, target, settings)
        return Record(json.loads(document))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fleet) and self._json == other._json

    def __hash__(self) -> int:
        return hash(self._json)

    def __getstate__(self) -> str:
        return self._json

    def __setstate__(self, state: str) -> None:
        self._json = state
        self._document = None

    def __repr__(self) -> str:
        totals = self._doc()["totals"]
        return f"Fleet({totals['nodes']} nodes, {totals['nodes_answered']} answered, {totals['accelerators']} accelerators)"


def _busy_text(busy: Union[None, str, Iterable[str]]) -> Optional[str]:
    if busy is None or isinstance(busy, str):
        return busy
    return ",".join(busy)


def scan_files(paths: Union[PathLike, Iterable[PathLike]], *, max_output_mib: Optional[int] = None) -> Fleet:
    """Registry files, or folders of ``*.json`` registries; a file that is
    not a registry is a node with an error, never an exception."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return Fleet(_native.fleet_scan_files([os.fspath(p) for p in items], {"max_output_mib": max_output_mib}))


def scan_lines(text: Union[str, bytes]) -> Fleet:
    """JSON lines, one registry per line, each naming its host (``hwaccel
    detect --host``); lines that name none are skipped with a warning."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return Fleet(_native.fleet_scan_lines(text))


def scan_hosts(
    hosts: Iterable[str],
    command: str,
    *,
    deadline: Optional[float] = None,
    concurrency: Optional[int] = None,
    max_output_mib: Optional[int] = None,
) -> Fleet:
    """Runs ``command`` (``{host}`` replaced; no shell) once per host,
    ``concurrency`` (default 32) at a time, each within ``deadline`` seconds
    (default 60; the scan's ``deadline-ms`` setting in milliseconds)."""
    settings: Dict[str, Any] = {
        "deadline_ms": None if deadline is None else int(deadline * 1000),
        "concurrency": concurrency,
        "max_output_mib": max_output_mib,
    }
    return Fleet(_native.fleet_scan_hosts(list(hosts), command, settings))


class ScanRecord(Record):
    """A scan kept in a :class:`FleetStore`: ``id``, ``scanned_at`` (UTC
    datetime), ``nodes``, ``nodes_answered``, ``accelerators``."""


class FleetStore:
    """Scans in a SQLite database (docs/fleet.md#history-in-sqlite). One
    connection: threads sharing a store take turns; stores of their own on
    the same file write concurrently."""

    def __init__(self, path: PathLike, *, read_only: bool = False) -> None:
        self._native = _native.FleetStore(os.fspath(path), read_only)

    def append(self, fleet: Fleet) -> int:
        """Stores a scan in one transaction; returns its id."""
        return int(self._native.append(fleet.to_json()))

    def scans(self) -> List[ScanRecord]:
        out = []
        for scan_id, at, nodes, answered, accelerators in self._native.scans():
            out.append(
                ScanRecord(
                    {
                        "id": scan_id,
                        "scanned_at": datetime.datetime.fromtimestamp(at, tz=datetime.timezone.utc),
                        "nodes": nodes,
                        "nodes_answered": answered,
                        "accelerators": accelerators,
                    }
                )
            )
        return out

    def latest(self) -> Optional[int]:
        value = self._native.latest()
        return None if value is None else int(value)

    def previous(self, scan_id: int) -> Optional[int]:
        value = self._native.previous(scan_id)
        return None if value is None else int(value)

    def load(self, scan_id: int) -> Fleet:
        """A stored scan; an unknown id raises :class:`hwaccel.NotFound`."""
        return Fleet(self._native.load(scan_id))

    def prune(self, keep: int) -> int:
        """Deletes all but the newest ``keep`` scans; returns how many went."""
        return int(self._native.prune(keep))

    @property
    def schema_version(self) -> int:
        return int(self._native.schema_version)


def nfd_labels(
    registry: Optional[Registry] = None, *, fixture: Optional[PathLike] = None, vendor_labels: bool = False
) -> Dict[str, str]:
    """This node's (or a fixture's, or a registry's) Kubernetes labels, as
    ``hwaccel export nfd`` writes them; Intel's labels need the machine, so a
    bare registry gives none of them."""
    native_registry = registry._native if registry is not None else None
    path = os.fspath(fixture) if fixture is not None else None
    return dict(_native.nfd_labels(native_registry, path, vendor_labels))


def slurm_config(*, fixture: Optional[PathLike] = None, node_name: Optional[str] = None) -> Record:
    """This node's (or a fixture's) ``gres_conf`` text, ``node_line``
    (slurm.conf), ``gres_types`` and ``warnings``, as ``hwaccel export slurm``."""
    path = os.fspath(fixture) if fixture is not None else None
    gres, node_line, gres_types, warnings = _native.slurm_config(path, node_name)
    return Record({"gres_conf": gres, "node_line": node_line, "gres_types": gres_types, "warnings": list(warnings)})
