"""The API's results a checkpoint does not make: a diff's ``Change``, a file as a checkpoint
holds it (``FileContent``), a rewind's ``RewindResult``, a gc's ``GcResult``, and a
session's ``SessionSummary``, ``SessionLog`` and ``SessionPage``.

Apart from ``models`` so that a fresh ``turnback checkpoint`` does not build their seven
classes on its critical path (bench/RESULTS.md, cold28); ``turnback.models`` still names
them, loading this module on first use.
"""

from __future__ import annotations

from dataclasses import field

from .events import JSON, Event, SessionHeader
from .fs.jsonl import Problem
from .fs.paths import display
from .record import record


@record
class Change:
    """One path that differs between two states."""

    path: str
    status: str  # "added" | "modified" | "deleted"
    binary: bool = False
    lines_added: int = 0
    lines_removed: int = 0
    kind: str = "file"  # "file" | "symlink"; a mode-only change is "modified"
    mode_changed: bool = False

    def to_json(self) -> JSON:
        return {
            "path": display(self.path),
            "status": self.status,
            "binary": self.binary,
            "linesAdded": self.lines_added,
            "linesRemoved": self.lines_removed,
            "kind": self.kind,
            "modeChanged": self.mode_changed,
        }


@record
class FileContent:
    """A file as one checkpoint (or the workspace now) holds it; ``text`` when shown."""

    path: str
    exists: bool
    binary: bool = False
    size: int = 0
    text: str | None = None
    kind: str = "file"  # "file" | "symlink" | "executable"

    def to_json(self) -> JSON:
        out: JSON = {
            "path": display(self.path),
            "exists": self.exists,
            "binary": self.binary,
            "size": self.size,
            "kind": self.kind,
        }
        if self.text is not None:
            out["text"] = self.text
        return out


@record
class RewindResult:
    """What a rewind or undo did (or, with ``dry_run``, would do)."""

    written: list[str]  # files whose content or mode was overwritten (existed before)
    created: list[str]  # files recreated (absent before)
    removed: list[str]  # files deleted (created since the checkpoint)
    safety_checkpoint: str | None
    dry_run: bool
    mode: str = "files"
    checkpoint: str | None = None
    head: str | None = None  # session head after a conversation rewind

    def to_json(self) -> JSON:
        return {
            # SPEC's `written` lists every path whose content was put in place.
            "written": sorted(display(p) for p in self.written + self.created),
            "overwritten": [display(p) for p in self.written],
            "created": [display(p) for p in self.created],
            "removed": [display(p) for p in self.removed],
            "safetyCheckpoint": self.safety_checkpoint,
            "dryRun": self.dry_run,
            "mode": self.mode,
            "checkpoint": self.checkpoint,
            "head": self.head,
        }


@record
class GcResult:
    """What a garbage collection removed (or, with ``dry_run``, would remove)."""

    objects_removed: int
    bytes_freed: int
    checkpoints_dropped: list[str]
    dry_run: bool
    bytes_after: int

    def to_json(self) -> JSON:
        return {
            "objectsRemoved": self.objects_removed,
            "bytesFreed": self.bytes_freed,
            "checkpointsDropped": self.checkpoints_dropped,
            "dryRun": self.dry_run,
            "bytes": self.bytes_after,
        }


@record
class SessionSummary:
    """A session's header and stats, without its events (what listings show)."""

    header: SessionHeader
    stats: JSON
    events: int
    head: str | None
    # False: only the header line was read (a listing answered before counting, see
    # ``Store.sessions_at_hand``): ``stats``, ``events`` and ``head`` are not known
    counted: bool = True

    def to_json(self) -> JSON:
        h = self.header
        out: JSON = {
            "id": h.id,
            "title": h.title,
            "agent": h.agent,
            "model": h.model,
            "cwd": h.cwd,
            "source": h.source,
            "startedAt": self.stats.get("startedAt") or h.started,
            "endedAt": self.stats.get("endedAt") or h.ended,
            "events": self.events,
            "head": self.head,
            "stats": self.stats,
        }
        if not self.counted:  # said as not known, never as zeros
            out.update(startedAt=h.started or None, endedAt=h.ended, events=None, head=None,
                       stats=None, counted=False)
        origin = h.extra.get("origin") if h.source == "pulled" else None
        if isinstance(origin, dict):  # pulled from another machine (sharing/)
            out["origin"] = origin
        return out


@record
class SessionLog:
    """A whole session as read from its backend."""

    header: SessionHeader
    events: list[Event]
    head: str | None
    problems: list[Problem] = field(default_factory=list)

    def by_id(self) -> dict[str, Event]:
        return {e.id: e for e in self.events}


@record
class SessionPage:
    """A slice of a session's events, with what a reader of the whole log would see."""

    events: list[Event]  # SessionLog.events[offset:offset + limit]
    total: int  # len(SessionLog.events)
    head: str | None
    problems: list[Problem] = field(default_factory=list)
