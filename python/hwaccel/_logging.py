"""Diagnostic events to the standard ``logging`` module.

The library reports what each detector looked at (files, folders, tools),
with outcomes and durations, at levels trace/debug/info/warn
(docs/cli.md, "Diagnostic logging"). They go to the ``hwaccel`` logger, which
has only a NullHandler of its own: nothing is printed unless the application
configures logging, and nothing is even collected unless a handler would
receive it. Events are collected while detection runs without the GIL and
logged when it returns, each with its fields in ``record.hwaccel``.
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

logger = logging.getLogger("hwaccel")
logger.addHandler(logging.NullHandler())

_LEVELS: Tuple[Tuple[int, str], ...] = (
    (TRACE, "trace"),
    (logging.DEBUG, "debug"),
    (logging.INFO, "info"),
    (logging.WARNING, "warn"),
)
_PYTHON_LEVEL: Dict[str, int] = {name: level for level, name in _LEVELS}


def _has_real_handler(log: logging.Logger) -> bool:
    current: Optional[logging.Logger] = log
    while current is not None:
        if any(not isinstance(h, logging.NullHandler) for h in current.handlers):
            return True
        if not current.propagate:
            return False
        current = current.parent
    return False


def wanted_level() -> Optional[str]:
    """The lowest library level the ``hwaccel`` logger would emit, or None."""
    if not _has_real_handler(logger):
        return None
    for level, name in _LEVELS:
        if logger.isEnabledFor(level):
            return name
    return None


Event = Tuple[str, str, str, str, str, str, int, int]


def emit(events: Sequence[Event]) -> None:
    for level, event, backend, subject, outcome, detail, count, elapsed_us in events:
        fields: Dict[str, Any] = {"event": event, "backend": backend or None}
        parts: List[str] = [f"{backend}: {event}" if backend else event]
        if subject:
            fields["subject"] = subject
            parts.append(subject)
        if outcome:
            fields["outcome"] = outcome
            parts.append(f"-> {outcome}")
        if count >= 0:
            fields["count"] = count
            parts.append(f"({count})")
        if elapsed_us >= 0:
            fields["elapsed_us"] = elapsed_us
            parts.append(f"[{elapsed_us} us]")
        message = " ".join(parts)
        if detail:
            fields["detail"] = detail
            message += f": {detail}"
        logger.log(_PYTHON_LEVEL.get(level, logging.INFO), message, extra={"hwaccel": fields})
