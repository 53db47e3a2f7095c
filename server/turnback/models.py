"""Result types of the Python API. Each has ``to_json`` in the protocol's camelCase.

The language server returns exactly these shapes, so the CLI's ``--json`` output,
the JSON-RPC results and the Python API agree field for field. The results a checkpoint
does not make are defined in ``results`` and named here too (loaded on first use).
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any

from .events import JSON
from .fs.jsonl import Problem as Problem  # the vocabulary: re-exported
from .record import record

# The other results live in ``results`` (a checkpoint makes none of them) and are named
# here too, loaded on first use
TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from .results import Change as Change
    from .results import FileContent as FileContent
    from .results import GcResult as GcResult
    from .results import RewindResult as RewindResult
    from .results import SessionLog as SessionLog
    from .results import SessionPage as SessionPage
    from .results import SessionSummary as SessionSummary

_IN_RESULTS = frozenset({"Change", "FileContent", "GcResult", "RewindResult", "SessionLog",
                         "SessionPage", "SessionSummary"})


# ``init=False``: it writes its own ``__init__``, compiled into the ``.pyc``, not by
# ``dataclass`` at every start (``record``'s docstring)
@record(init=False)
class Checkpoint:
    """A whole-workspace (or, when ``partial``, some-files) snapshot at one moment."""

    id: str
    label: str
    ts: str
    tree: str  # hash of the root tree object
    session_id: str | None
    event_id: str | None
    auto: bool = False
    partial: bool = False
    files: int = 0
    bytes: int = 0  # total size of the files it holds
    skipped: list[JSON] = field(default_factory=list)  # [{path, reason, size?}]
    absent: list[str] = field(default_factory=list)  # partial: paths known not to exist
    # pulled from another machine (sharing/): its machine id; None for this workspace's own
    origin: str | None = None
    # a rewind's or an undo's safety checkpoint: (operation, id of the checkpoint it goes to),
    # stored since ux33 so that nothing reads it back from the label (docs/FORMAT.md)
    safety_of: tuple[str, str] | None = None

    def __init__(self, id: str, label: str, ts: str, tree: str, session_id: str | None,
                 event_id: str | None, auto: bool = False, partial: bool = False,
                 files: int = 0, bytes: int = 0, skipped: list[JSON] | None = None,
                 absent: list[str] | None = None, origin: str | None = None,
                 safety_of: tuple[str, str] | None = None) -> None:
        self.id = id
        self.label = label
        self.ts = ts
        self.tree = tree
        self.session_id = session_id
        self.event_id = event_id
        self.auto = auto
        self.partial = partial
        self.files = files
        self.bytes = bytes
        self.skipped = [] if skipped is None else skipped
        self.absent = [] if absent is None else absent
        self.origin = origin
        self.safety_of = safety_of

    def to_json(self) -> JSON:
        out: JSON = {
            "id": self.id,
            "label": self.label,
            "ts": self.ts,
            "tree": self.tree,
            "sessionId": self.session_id,
            "eventId": self.event_id,
            "auto": self.auto,
            "partial": self.partial,
            "files": self.files,
            "bytes": self.bytes,
            "skipped": self.skipped,
            "absent": self.absent,
        }
        if self.origin is not None:
            out["origin"] = self.origin
        if self.safety_of is not None:
            out["safetyOf"] = {"op": self.safety_of[0], "checkpoint": self.safety_of[1]}
        return out

    @classmethod
    def from_json(cls, obj: JSON) -> Checkpoint:
        origin = obj.get("origin")
        return cls(
            id=str(obj["id"]),
            label=str(obj.get("label") or ""),
            ts=str(obj.get("ts") or ""),
            tree=str(obj["tree"]),
            session_id=obj.get("sessionId"),
            event_id=obj.get("eventId"),
            auto=bool(obj.get("auto", False)),
            partial=bool(obj.get("partial", False)),
            files=int(obj.get("files", 0)),
            bytes=int(obj.get("bytes", 0)),
            skipped=list(obj.get("skipped") or []),
            absent=list(obj.get("absent") or []),
            origin=origin if isinstance(origin, str) else None,
            safety_of=_safety_of(obj.get("safetyOf")),
        )


_SAFETY_OPS = ("rewind", "undo")
_HEX_ID = re.compile(r"[0-9a-f]{12,64}")


def _safety_of(value: Any) -> tuple[str, str] | None:
    """A record's ``safetyOf`` when it has the shape the store writes, else None: it is
    store text, so another shape (or operation) is read as no field at all."""
    if not isinstance(value, dict):
        return None
    op, target = value.get("op"), value.get("checkpoint")
    if op not in _SAFETY_OPS or not isinstance(target, str) or not _HEX_ID.fullmatch(target):
        return None
    return (op, target)


def jsonable(obj: Any) -> Any:
    """``to_json`` of a model, or the value unchanged."""
    to_json = getattr(obj, "to_json", None)
    return to_json() if callable(to_json) else obj


def __getattr__(name: str) -> type:
    """The results defined in ``results`` (``_IN_RESULTS``), loaded on first use."""
    if name not in _IN_RESULTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import results

    value: type = getattr(results, name)
    globals()[name] = value  # once: later look-ups find it directly
    return value
