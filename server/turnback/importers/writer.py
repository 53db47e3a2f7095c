"""Write importer records into a store, in batches, without duplicating anything.

Events go through ``store.append_events`` (ids already present are skipped),
checkpoints carry a stable id (an existing one is left alone), and header
updates are collected and written once, only where they differ — so importing
the same input twice changes nothing, and a grown file adds only its tail.
"""

from __future__ import annotations

from ..errors import TurnbackError
from ..events import Event, Kind, SessionHeader
from ..models import Problem
from ..store.facade import Store
from .base import (
    CheckpointRecord,
    EventRecord,
    MetaRecord,
    Record,
    SessionRecord,
    is_valid_id,
)
from .result import ImportResult

# Events per append. Each append takes the session's lock and reads the ids it
# holds, so fewer, larger batches import faster; this many events stay in memory.
BATCH = 5000
# ... and at most about this much input: events with large tool outputs are big.
BATCH_BYTES = 8 << 20


# What sources write when an agent's turn is over: Codex's task_complete /
# turn_aborted (an iteration_completed), Claude Code's turn_duration and
# stop_hook_summary system lines. Sources without one end a turn when their file
# rests (the follower's idle flush).
TURN_END_NOTES = frozenset({"turn_duration", "stop_hook_summary"})


def is_turn_end(event: Event) -> bool:
    if event.kind == Kind.ITERATION_COMPLETED:
        return True
    return event.kind == Kind.NOTE and event.data.get("subtype") in TURN_END_NOTES


class RecordWriter:
    def __init__(self, store: Store, result: ImportResult) -> None:
        self.store = store
        self.result = result
        self.file = ""  # the input being read, for problems found while writing
        self.headers: dict[str, SessionHeader] = {}
        self.buffers: dict[str, list[Event]] = {}
        self.meta: dict[str, dict[str, str]] = {}
        self.title_rank: dict[str, int] = {}
        self.pending_bytes = 0
        # sessions this run's inputs name but another source (or the store itself) wrote:
        # their events, titles, heads and checkpoints are not taken (``_session``)
        self.refused: set[str] = set()

    def consumed(self, nbytes: int) -> None:
        """Input read since the last write: flush before the buffers grow large."""
        self.pending_bytes += nbytes
        if self.pending_bytes >= BATCH_BYTES:
            self.flush()

    def add(self, rec: Record) -> None:
        if isinstance(rec, EventRecord):
            self._event(rec.event)
        elif isinstance(rec, SessionRecord):
            self._session(rec.header)
        elif isinstance(rec, MetaRecord):
            self._meta(rec)
        elif isinstance(rec, CheckpointRecord):
            self._checkpoint(rec)
        else:
            self.result.add_problem(rec)

    def flush(self) -> None:
        """Write the buffered events of every session."""
        self.pending_bytes = 0
        for sid in list(self.buffers):
            self._flush(sid)

    def close(self) -> None:
        """Write what is buffered and the header updates."""
        self.flush()
        for sid, fields in self.meta.items():
            if not self._known(sid):
                continue
            header = self.headers[sid]
            head = fields.pop("head", None)
            if head is not None and self.store.session_summary(sid).head != head:
                try:
                    self.store.fork(head, sid)
                except TurnbackError as exc:
                    self.result.add_problem(Problem(self.file, 0, f"head not restored: {exc}"))
            changed = {k: v for k, v in fields.items() if getattr(header, k, None) != v}
            if changed:
                self.store.update_session(sid, **changed)
                for k, v in changed.items():
                    setattr(header, k, v)
        self.meta.clear()

    # -- records -------------------------------------------------------

    def _session(self, header: SessionHeader) -> None:
        if header.id in self.refused:
            return
        if header.id in self.headers:
            self.result.add_session(header.id)
            return
        stored, _created = self.store.ensure_session(header)
        if stored.source != header.source:
            # a transcript names the session id of another tool's session, of the store's
            # own ("workspace") or of a pulled one: a file anyone can write in ~ would add
            # prompts to that conversation, retitle it and move its head
            self.refused.add(header.id)
            self.result.add_problem(Problem(
                self.file, 0, f"session {header.id!r} is in the store already, written by "
                f"{stored.source!r}; this {header.source} input names the same id, so "
                "nothing of it was added to that session (rename or move the input if it "
                "is yours)"))
            return
        self.result.add_session(header.id)
        self.headers[header.id] = stored
        self.title_rank.setdefault(header.id, 0)

    def _known(self, sid: str) -> bool:
        """Whether the session was announced (or is in the store: a follower's later poll)."""
        if sid in self.headers:
            return True
        if sid in self.refused:
            return False
        if is_valid_id(sid) and self.store.has_session(sid):
            self.headers[sid] = self.store.session_summary(sid).header
            return True
        return False

    def _event(self, event: Event) -> None:
        sid = event.session
        if sid in self.refused:
            return  # said once, by _session
        if not self._known(sid):
            self.result.add_problem(
                Problem(self.file, 0, f"event {event.id} names no known session {sid!r}; skipped")
            )
            return
        buf = self.buffers.setdefault(sid, [])
        buf.append(event)
        if len(buf) >= BATCH:
            self._flush(sid)

    def _flush(self, sid: str) -> None:
        buf = self.buffers.pop(sid, None)
        if not buf:
            return
        added = self.store.append_events(sid, buf)
        self.result.events += added
        if added:
            self.result.add_session(sid)
        # Sources only ever append, and ids are derived from the input, so what the
        # store did not have yet is the batch's tail: its prompts are new prompts. A
        # sidechain's prompt is the main agent's task for a subagent, not a new turn.
        if added and any(e.kind == Kind.PROMPT and e.data.get("sidechain") is not True
                         for e in buf[len(buf) - added:]):
            self.result.add_prompted(sid)
        if added and any(is_turn_end(e) for e in buf[len(buf) - added:]):
            self.result.add_ended(sid)

    def _meta(self, rec: MetaRecord) -> None:
        fields = self.meta.setdefault(rec.session_id, {})
        for key, value in rec.fields.items():
            if key == "title":
                if rec.title_rank < self.title_rank.get(rec.session_id, 0):
                    continue
                self.title_rank[rec.session_id] = rec.title_rank
            fields[key] = value

    def _checkpoint(self, rec: CheckpointRecord) -> None:
        if not self._known(rec.session_id):
            return
        self._flush(rec.session_id)
        try:
            if self.store.resolve_checkpoint(rec.checkpoint_id).id == rec.checkpoint_id:
                return  # imported before
        except TurnbackError:
            pass  # not found (or only as a prefix of others): import it
        try:
            self.store.import_checkpoint(
                rec.files,
                rec.session_id,
                event_id=rec.event_id,
                label=rec.label,
                ts=rec.ts,
                partial=True,
                checkpoint_id=rec.checkpoint_id,
            )
        except TurnbackError as exc:
            self.result.add_problem(
                Problem(rec.file or self.file, rec.line, f"checkpoint not imported: {exc.message}")
            )
            return
        self.result.checkpoints += 1
        self.result.add_session(rec.session_id)
