"""What the store's turn and file-history queries return, and what ``TurnOps`` keeps
between them. Apart from ``turn_ops`` because their dataclasses cost ~3 ms to make at
import, which every fresh process that opens a store paid (the CLI's no-op checkpoint
among them) though only turn queries use them: ``turn_ops`` imports this module there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..events import JSON, Event, Kind
from ..models import Checkpoint
from ..results import Change, SessionLog
from ..sessions.files import ReadLog
from .safety_names import checkpoint_json

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..sessions.turns import Turn, TurnBuilder


@dataclass(slots=True)
class TurnChanges:
    """What a turn changed: its ``before`` checkpoint against its ``after``."""

    files: int
    added: int
    removed: int
    changes: list[Change] = field(default_factory=list)

    def to_json(self, with_list: bool) -> JSON:
        out: JSON = {"files": self.files, "linesAdded": self.added, "linesRemoved": self.removed}
        if with_list:
            out["changes"] = [c.to_json() for c in self.changes]
        return out


@dataclass(slots=True)
class TurnPage:
    turns: list[Turn]
    total: int
    offset: int
    changes: dict[str, TurnChanges]  # by turn id, for the turns that have both ends


@dataclass(slots=True)
class FileVersion:
    """One checkpoint where a file changed, and the one holding the version before."""

    checkpoint: Checkpoint
    previous: Checkpoint | None
    status: str  # added | modified | deleted
    lines_added: int = 0
    lines_removed: int = 0
    binary: bool = False
    turn_id: str | None = None
    turn_prompt: str = ""
    agent: str = ""
    # a rewind's or undo's safety checkpoint: the files as they were before it, kept so that
    # it can be undone (the only copy of edits made since the checkpoint before)
    safety: bool = False

    def to_json(self, by_id: Mapping[str, Checkpoint]) -> JSON:
        """``by_id``: the checkpoints a safety checkpoint's words may name (the checkpoint is
        said as ``turnback/checkpoints`` says it: ``safety_names.checkpoint_json``)."""
        return {
            "checkpoint": checkpoint_json(self.checkpoint, by_id),
            "previous": self.previous.id if self.previous else None,
            "previousLabel": self.previous.label if self.previous else None,
            "status": self.status,
            "linesAdded": self.lines_added,
            "linesRemoved": self.lines_removed,
            "binary": self.binary,
            "sessionId": self.checkpoint.session_id,
            "turnId": self.turn_id,
            "turnPrompt": self.turn_prompt,
            "agent": self.agent,
            "safety": self.safety,
        }




@dataclass(slots=True, frozen=True)
class SessionView:
    key: tuple[object, ...]  # the checkpoint list's length and last id
    log: SessionLog
    checkpoint_at: dict[str, str]
    turns: list[Turn]
    owner: dict[str, str]  # event id → its turn's id (grows with the builder)
    read: ReadLog | None  # where the session file was read to (None: not a file)
    builder: TurnBuilder
    marks: EventMarks
    at: CheckpointsAt


@dataclass(slots=True, frozen=True)
class CheckpointsAt:
    """What ``checkpoint_at`` was made from, so that after new checkpoints it is continued
    rather than made again over every checkpoint."""

    cps: list[Checkpoint]  # the index's list
    known: frozenset[str]  # their ids
    pending: frozenset[str]  # checkpoints named by checkpoint events, not in the list


@dataclass(slots=True, frozen=True)
class EventMarks:
    """What of a session's events ties them to checkpoints, gathered as they are read."""

    safety: frozenset[str]  # rewinds' safety checkpoints
    cp_events: tuple[tuple[str, str], ...]  # (event id, checkpoint id) of checkpoint events

    def more(self, events: list[Event]) -> EventMarks:
        safety = {e.data.get("safetyCheckpoint") for e in events if e.kind == Kind.REWIND}
        cps = [(e.id, cid) for e in events if e.kind == Kind.CHECKPOINT
               and isinstance(cid := e.data.get("checkpoint"), str)]
        if not safety and not cps:
            return self
        return EventMarks(self.safety | {s for s in safety if isinstance(s, str)},
                      self.cp_events + tuple(cps))
