"""Turnback: workspace history for AI coding agents.

Sessions as event trees, content-addressed checkpoints of the whole workspace,
diffs, and rewind with undo. Start with ``Store.open(workspace)``.
"""

from .config import FORMAT_VERSION, StoreConfig
from .errors import Conflict, InvalidInput, NotFound, StoreDamaged, TurnbackError, Unsafe
from .events import Event, Kind, SessionHeader
from .models import Change, Checkpoint, FileContent, RewindResult, SessionLog, SessionSummary
from .store import HEAD, Store

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
