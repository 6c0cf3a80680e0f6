"""The exceptions hwaccel raises: one base class, one subclass per error kind.

Each subclass also derives from the built-in exception a Python programmer
would catch for that situation, so ``except FileNotFoundError`` or ``except
ValueError`` work as well as ``except hwaccel.Error``. The message is the
library's, and names the input that was wrong.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every error hwaccel raises. ``kind`` names the library's ErrorKind."""

    kind: str = "error"


class NotFound(Error, FileNotFoundError):
    """A file, folder, fixture or catalogue entry does not exist."""

    kind = "not_found"


class PermissionDenied(Error, PermissionError):
    """The process may not read a file it needs."""

    kind = "permission_denied"


class IoError(Error, OSError):
    """A read failed for another reason."""

    kind = "io_error"


class NotRegularFile(Error, OSError):
    """A FIFO, device node or socket where a file was expected."""

    kind = "not_regular_file"


class EscapesRoot(Error, ValueError):
    """A fixture's path or symbolic link leads outside the fixture."""

    kind = "escapes_root"


class SymlinkLoop(Error, OSError):
    """Too many levels of symbolic links."""

    kind = "symlink_loop"


class ToolNotFound(Error, FileNotFoundError):
    """A vendor tool is not on PATH."""

    kind = "tool_not_found"


class ToolFailed(Error, RuntimeError):
    """A vendor tool could not be started."""

    kind = "tool_failed"


class Timeout(Error, TimeoutError):
    """A deadline passed."""

    kind = "timeout"


class NotCaptured(Error, LookupError):
    """Fixture replay: the command or file was not recorded."""

    kind = "not_captured"


class ParseError(Error, ValueError):
    """Input (a file, a tool's output, JSON) did not have the expected form."""

    kind = "parse_error"


class InvalidInput(Error, ValueError):
    """An argument is out of range, unknown or inconsistent with another."""

    kind = "invalid_input"


class Unsupported(Error, RuntimeError):
    """The request cannot be served here."""

    kind = "unsupported"


BY_KIND: dict[str, type[Error]] = {
    cls.kind: cls
    for cls in (
        NotFound,
        PermissionDenied,
        IoError,
        NotRegularFile,
        EscapesRoot,
        SymlinkLoop,
        ToolNotFound,
        ToolFailed,
        Timeout,
        NotCaptured,
        ParseError,
        InvalidInput,
        Unsupported,
    )
}
