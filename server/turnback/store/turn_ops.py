"""The store's view of a session's turns: what each asked and changed, kept between calls.
Reads only. A file's history, labelled with these turns, is ``file_history_ops.py``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from ..errors import NotFound, imported_late
from ..events import Event, Kind
from ..models import Checkpoint
from ..sessions.files import FileSessions
from .checkpoint_ops import CheckpointOps

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    # imported where turns are built: the checkpoints that open the store most often (the
    # CLI's, a server's first) need none of it
    from ..sessions.turns import Step, Turn, TurnBuilder
    from .turn_views import (
        CheckpointsAt,
        EventMarks,
        SessionView,
        TurnChanges,
        TurnPage,
    )


MAX_TURN_CHANGES = 2000  # changed files listed per turn; the count stays exact
_CACHED_SESSIONS = 4  # sessions whose events and turns are kept between calls


class TurnOps(CheckpointOps):
    """A session's turns (see ``Store``).

    A session's turns are built from all its events; paging through them, expanding a turn
    or opening a file's history would read and parse the whole file each time (2 s for
    20,000 events on a loaded machine). The last few sessions' events and turns are kept:
    a session file only grows, so what was appended since is read and fed to the kept
    turns (``TurnBuilder``); the file read again, or the turns built again from the kept
    events, only when it was rewritten, or when a checkpoint appeared or went away for an
    event already seen (``_checkpoint_at``).
    """

    _views: OrderedDict[str, SessionView]
    _views_lock: threading.Lock
    _session_locks: dict[str, threading.Lock]

    def _view(self, session_id: str) -> SessionView:
        if "_views" not in self.__dict__:
            self._views = OrderedDict()
            self._views_lock = threading.Lock()
            self._session_locks = {}
        with self._views_lock:
            lock = self._session_locks.setdefault(session_id, threading.Lock())
        with lock:  # one refresh per session at a time; readers keep the view they got
            with self._views_lock:
                hit = self._views.get(session_id)
            view = self._refresh(session_id, hit)
            if view.read is not None:
                with self._views_lock:
                    self._views[session_id] = view
                    self._views.move_to_end(session_id)
                    while len(self._views) > _CACHED_SESSIONS:
                        gone, _ = self._views.popitem(last=False)
                        self._session_locks.pop(gone, None)
            return view

    def _refresh(self, session_id: str, hit: SessionView | None) -> SessionView:
        with imported_late("turnback.store.turn_views"):
            from .turn_views import EventMarks, SessionView

        cps = self.index.all()
        key = (len(cps), cps[-1].id if cps else None)
        if isinstance(self.backend, FileSessions):
            read, known = self.backend.load_more(session_id, hit.read if hit else None)
            log = read.log
        else:  # the in-memory backend: always built afresh
            read, known, log = None, 0, self.session(session_id)
        if hit is not None and known and hit.read is read and hit.key == key:
            return hit  # nothing appended, no checkpoint added or dropped
        if hit is None or not known:
            marks = EventMarks(frozenset(), ()).more(log.events)
        else:
            marks = hit.marks.more(log.events[known:])
        made = self._checkpoint_at(session_id, cps, marks, hit if known else None)
        at = made[0]
        builder: TurnBuilder | None = None
        if hit is not None and known and hit.read is not None \
                and _same_for_old(hit.checkpoint_at, at, hit.owner):
            builder = hit.builder
            builder.feed(log.events[known:], at)
        if builder is None:
            with imported_late("turnback.sessions.turns"):
                from ..sessions.turns import TurnBuilder

            builder = TurnBuilder()
            builder.feed(log.events, at)
        return SessionView(key, log, at, builder.turns(log.head), builder.owner, read, builder,
                     marks, made[1])

    def _checkpoint_at(self, session_id: str, cps: list[Checkpoint], marks: EventMarks,
                       hit: SessionView | None) -> tuple[dict[str, str], CheckpointsAt]:
        """Event id → checkpoint id, from the index and from ``checkpoint`` events' data
        (the index's first, then each event's first checkpoint the index holds).

        A rewind's safety checkpoint is left out: it holds the state being left, not a
        moment of the turn its event lands in (after a fork it lands in an earlier turn,
        which would then seem to end with the later turns' changes).

        ``hit``: the view before, its events continued by ``marks``. When checkpoints were
        only appended since, no new rewind came and none of the new checkpoints is one an
        earlier event named before the index held it, its map is continued with the new
        checkpoints and events alone: the same map, without a pass over every checkpoint
        (on every new checkpoint of a live session)."""
        with imported_late("turnback.store.turn_views"):
            from .turn_views import CheckpointsAt

        safety = marks.safety
        if hit is not None:
            old, m = hit.at, len(hit.at.cps)
            new = cps[m:]
            if m <= len(cps) and hit.marks.safety == safety and cps[:m] == old.cps:
                ids = {c.id for c in new}
                if not ids & old.pending:
                    known = old.known | ids if ids else old.known
                    out = dict(hit.checkpoint_at)
                    pending: set[str] = set()
                    for eid, cid in marks.cp_events[len(hit.marks.cp_events):]:
                        if cid in known:
                            if cid not in safety:
                                out.setdefault(eid, cid)
                        else:
                            pending.add(cid)
                    for c in new:  # the index's, over any event's (and the later one)
                        if c.session_id == session_id and c.event_id and c.id not in safety:
                            out[c.event_id] = c.id
                    return out, CheckpointsAt(cps, known, old.pending | pending if pending
                                    else old.pending)
        out = {c.event_id: c.id for c in cps
               if c.session_id == session_id and c.event_id and c.id not in safety}
        known = frozenset(c.id for c in cps)
        pending = set()
        for eid, cid in marks.cp_events:
            if cid in known:
                if cid not in safety:
                    out.setdefault(eid, cid)
            else:
                pending.add(cid)
        return out, CheckpointsAt(cps, known, frozenset(pending))

    def turns(self, session_id: str) -> list[Turn]:
        """Every turn of the session, in append order (prompt → everything until the next)."""
        return list(self._view(session_id).turns)

    def turn_page(self, session_id: str, offset: int | None, limit: int) -> TurnPage:
        """A page of turns with what each changed; ``offset`` None: the latest page."""
        with imported_late("turnback.store.turn_views"):
            from .turn_views import TurnPage

        every = self.turns(session_id)
        start = max(0, len(every) - limit) if offset is None else offset
        page = every[start : start + limit]
        changes = {}
        for t in page:
            c = self.turn_changes(t, with_list=False)
            if c is not None:
                changes[t.id] = c
        return TurnPage(page, len(every), start, changes)

    def find_turn(self, session_id: str, turn_id: str) -> Turn:
        for t in self.turns(session_id):
            if t.id == turn_id:
                return t
        raise NotFound(f"no turn {turn_id!r} in session {session_id!r}: a turn is named by "
                       "its prompt's event id (`turnback turns SESSION` lists them)")

    def turn_changes(self, turn: Turn, with_list: bool = True) -> TurnChanges | None:
        """The turn's start ↔ end; None when it lacks a checkpoint at either end."""
        with imported_late("turnback.store.turn_views"):
            from .turn_views import TurnChanges

        if turn.before is None or turn.after is None or turn.before == turn.after:
            return None
        found = self.changes(turn.before, turn.after)
        return TurnChanges(
            len(found),
            sum(c.lines_added for c in found),
            sum(c.lines_removed for c in found),
            found[:MAX_TURN_CHANGES] if with_list else [],
        )

    def steps(self, session_id: str, turn_id: str) -> list[Step]:
        view = self._view(session_id)
        if not any(t.id == turn_id for t in view.turns):
            raise NotFound(f"no turn {turn_id!r} in session {session_id!r}")
        with imported_late("turnback.sessions.turns"):
            from ..sessions.turns import turn_steps

        steps = turn_steps(view.log.events, turn_id, view.checkpoint_at, view.owner)
        self._name_undos(steps, view.log.events)
        return steps

    def _name_undos(self, steps: list[Step], events: Sequence[Event]) -> None:
        """An undo's step says what it undid, as the session's rows do ("undo of rewind
        to “X” (files)", ``safety_names.event_summary``): its event alone says "undo
        (files)", and ``sessions/turns`` sits below the store, without the checkpoints."""
        undos = {e.id: e for e in events if e.kind == Kind.REWIND and e.data.get("undo")}
        if not any(s.id in undos for s in steps):
            return
        with imported_late("turnback.store.safety_names"):
            from .safety_names import event_summary

        by_id = {c.id: c for c in self.checkpoints(None)}
        for s in steps:
            if s.id in undos:
                s.label = event_summary(undos[s.id], by_id)

    def nearest_checkpoint(self, turn: Turn) -> Checkpoint | None:
        """For a turn with no checkpoint before it: the folder's last checkpoint taken before
        the turn started, else the first one after."""
        pool = self.checkpoints()  # by time
        earlier = [c for c in pool if c.ts <= turn.ts]
        if earlier:
            return earlier[-1]
        return pool[0] if pool else None



def _same_for_old(old: dict[str, str], new: dict[str, str], seen: dict[str, str]) -> bool:
    """Whether ``new`` says of every event in ``seen`` what ``old`` said (set operations on
    the dicts' views, in C: this runs on every refresh of a live session)."""
    if not old.items() <= new.items():
        return False
    return not any(k in seen for k in new.keys() - old.keys())
