"""Turnback: workspace history for AI coding agents.

Sessions as event trees, content-addressed checkpoints of the whole workspace,
diffs, and rewind with undo. Start with ``Store.open(workspace)``.

The names below are imported on first use: ``turnback checkpoint`` imports its
package before anything else, and must not pay for the store's modules before it
has started checking the workspace (see ``prescan``).
"""

from __future__ import annotations

# not ``typing.TYPE_CHECKING``: importing typing (with re and enum, ~8 ms) here would delay
# the CLI's early fork; mypy treats any ``TYPE_CHECKING`` as true
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .errors import Conflict, InvalidInput, NotFound, StoreDamaged, TurnbackError, Unsafe
    from .events import Event, Kind, SessionHeader
    from .models import Checkpoint
    from .results import Change, FileContent, RewindResult, SessionLog, SessionSummary
    from .store.config import FORMAT_VERSION, StoreConfig
    from .store.facade import HEAD, Store

_WHERE = {
    "FORMAT_VERSION": "store.config", "StoreConfig": "store.config",
    "Conflict": "errors", "InvalidInput": "errors", "NotFound": "errors",
    "StoreDamaged": "errors", "TurnbackError": "errors", "Unsafe": "errors",
    "Event": "events", "Kind": "events", "SessionHeader": "events",
    "Change": "results", "Checkpoint": "models", "FileContent": "results",
    "RewindResult": "results", "SessionLog": "results", "SessionSummary": "results",
    "HEAD": "store.facade", "Store": "store.facade",
}

__all__ = [
    "FORMAT_VERSION",
    "HEAD",
    "Change",
    "Checkpoint",
    "Conflict",
    "Event",
    "FileContent",
    "InvalidInput",
    "Kind",
    "NotFound",
    "RewindResult",
    "SessionHeader",
    "SessionLog",
    "SessionSummary",
    "Store",
    "StoreConfig",
    "StoreDamaged",
    "TurnbackError",
    "Unsafe",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # once: later look-ups find it directly
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
