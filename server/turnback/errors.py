"""Errors that name the thing that is wrong and what to do about it.

Each class carries the JSON-RPC error code the language server answers with, so
the server maps errors by class and never by parsing messages.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator


class TurnbackError(Exception):
    """Base of every error Turnback raises on purpose."""

    code = -32603  # JSON-RPC internal error; subclasses narrow it.

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(TurnbackError):
    """A parameter, argument or input file is malformed; the message names the field."""

    code = -32602


class NotFound(TurnbackError):
    """A session, event, checkpoint, object or path does not exist."""

    code = -32001


class Conflict(TurnbackError):
    """The operation clashes with the current state (e.g. nothing to undo)."""

    code = -32002


class StoreDamaged(TurnbackError):
    """Stored data is unreadable: a torn object, a bad index, an unknown format version."""

    code = -32003


class Unsafe(TurnbackError):
    """Refused because it would touch something outside the workspace."""

    code = -32004


class LinkedInStore(Unsafe, OSError):
    """A link (or another folder) found in an open store's layout, where a write or a
    removal would have gone through it: nothing was written or removed. An ``OSError`` too,
    so a cache's best-effort write (``except OSError``) is skipped as on a full disk,
    while a request's write is answered with ``Unsafe``'s code."""


class CodeChanged(TurnbackError):
    """Turnback's own code could not be imported where it was first needed: its files
    changed or went missing since the process started (an upgrade while a server ran)."""


# what ``compile`` says of source holding a NUL byte (a SyntaxError on 3.11.7, a ValueError
# on 3.10.13): never a message of Turnback's own
_NUL_SOURCE = "source code string cannot contain null bytes"


def _nul_file(module: str) -> str:
    """The file of ``module`` if it holds a NUL byte, else what to look at."""
    try:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        if origin is not None:
            with open(origin, "rb") as f:
                if b"\0" in f.read():
                    return f"{origin} holds NUL bytes"
    except (ImportError, OSError, ValueError):
        pass
    return f"a file {module} imports holds NUL bytes"


@contextlib.contextmanager
def imported_late(module: str) -> Iterator[None]:
    """Around an import made where its code is first needed rather than at start (a
    checkpoint imports less: issue 23). Its failure comes long after the start, and before
    anything is written: said as what it is, not as a bug."""
    try:
        yield
    except (SyntaxError, ValueError) as exc:
        if str(exc) != _NUL_SOURCE:
            raise  # a bug's: shown as one
        # a module file whose tail is zeros (a crash mid-write): 3.11 raises SyntaxError,
        # 3.10 ValueError, neither naming the file; one SyntaxError naming it in both
        raise SyntaxError(f"{_NUL_SOURCE}: {_nul_file(module)}") from exc
    except ImportError as exc:
        raise CodeChanged(
            f"Turnback's module {module} could not be imported ({exc}): Turnback's files "
            "changed or went missing since this process started (upgraded while it ran?). "
            "Nothing was changed: restart the server (or run the command again); reinstall "
            "Turnback if that does not help") from exc
