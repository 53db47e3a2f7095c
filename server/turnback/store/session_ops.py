"""The store's session operations: event trees, appended to and read back, forked."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import Conflict, InvalidInput, NotFound, StoreDamaged
from ..events import (
    JSON,
    Event,
    SessionHeader,
    check_id,
    new_id,
    new_session_id,
    now_iso,
)
from ..fs.folders import Folder
from ..sessions import first_page
from ..sessions.files import FileSessions
from .state import StoreState

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..results import (  # imported where one is made: a checkpoint makes none (cold28)
        SessionLog,
        SessionPage,
        SessionSummary,
    )

WORKSPACE_SESSION = "workspace"
# Session bytes a listing counts before its first answer: about 0.2 s of CPU (87 MB/s
# measured, bench/RESULTS.md "Issue 16 … never listed"). A new or small store is listed
# in full, exactly; a bigger one not yet counted answers from its header lines first.
COUNT_BEFORE_ANSWER = 16 << 20
# The most ``record``'s pick counts of one session not counted yet whose last lines show
# no end (an end before them is found so): as much as a listing counts before it answers.
# A count of a planted 1 GiB sparse file cost 4.5 s of CPU and 2 GB (bench/RESULTS.md,
# branch redteam11); past this, the last lines alone say whether it ended.
COUNT_TO_PICK = COUNT_BEFORE_ANSWER


class _Head:
    """Sentinel: attach to the session head."""


HEAD: Any = _Head()


def filter_sessions(summaries: list[SessionSummary], query: str) -> list[SessionSummary]:
    """The summaries whose id, title, agent or model holds ``query`` (any case), in order."""
    q = query.lower()
    return [
        s for s in summaries
        if q in s.header.id.lower() or q in s.header.title.lower()
        or q in s.header.agent.lower() or q in (s.header.model or "").lower()
    ]


def _recordable(header: SessionHeader) -> bool:
    """Whether ``record`` told no session may append to this one."""
    return (header.id != WORKSPACE_SESSION and header.source != "pulled"
            and not header.ended)


def listing_order(summary: SessionSummary) -> tuple[str, str]:
    """The key ``Store.sessions`` sorts by, newest first: when the session started, then its id."""
    return (summary.stats.get("startedAt") or summary.header.started or "", summary.header.id)


class SessionOps(StoreState):
    """Sessions of the store (see ``Store``)."""

    _first_saved = b""  # index/first.json as this Store last wrote it

    def start_session(
        self,
        title: str = "",
        agent: str = "unknown",
        model: str | None = None,
        cwd: str | None = None,
        source: str = "turnback",
        session_id: str | None = None,
        started: str | None = None,
        extra: JSON | None = None,
    ) -> SessionHeader:
        sid = check_id(session_id, "session id") if session_id else new_session_id()
        header = SessionHeader(sid, title, agent, model, started or now_iso(),
                               cwd or str(self.workspace), source, None, extra or {})
        self.backend.create(header)
        return header

    def ensure_session(self, header: SessionHeader) -> tuple[SessionHeader, bool]:
        """Create the session unless it exists (importers); return it and whether it was new."""
        check_id(header.id, "session id")
        if self.backend.exists(header.id):
            return self.backend.load(header.id).header, False
        try:
            self.backend.create(header)
        except Conflict:
            return self.backend.load(header.id).header, False
        return header, True

    def sessions_written(self) -> set[str] | None:
        """The sessions this Store wrote since the last call (None: its backend keeps no
        count). A session file changed by anything else is not in it."""
        if isinstance(self.backend, FileSessions):
            return self.backend.take_touched()
        return None

    def has_session(self, session_id: str) -> bool:
        return self.backend.exists(check_id(session_id, "session id"))

    def update_session(self, session_id: str, **meta: str) -> None:
        bad = set(meta) - {"title", "agent", "model", "cwd", "ended"}
        if bad:
            raise InvalidInput(f"cannot update session field(s) {sorted(bad)}")
        self.backend.update_meta(check_id(session_id, "session id"), meta)

    def end_session(self, session_id: str, ts: str | None = None) -> None:
        self.update_session(session_id, ended=ts or now_iso())

    def _workspace_session(self) -> str:
        if not self.backend.exists(WORKSPACE_SESSION):
            try:
                self.backend.create(SessionHeader(
                    WORKSPACE_SESSION, "Workspace checkpoints", "turnback", None, now_iso(),
                    str(self.workspace), "turnback"))
            except Conflict:
                pass
        return WORKSPACE_SESSION

    def append(
        self,
        session_id: str,
        kind: str,
        data: JSON | None = None,
        parent: str | _Head | None = HEAD,
        ts: str | None = None,
        event_id: str | None = None,
        fsync: bool = False,
        sessions: Folder | None = None,
    ) -> Event:
        """Append one event; ``parent`` defaults to the head (decided under the file lock).
        ``sessions``: the session's folder, open (the caller's, ``backend.sessions_in``):
        the session reached there, not by path (``FileSessions.append``)."""
        self.finish_rewind()
        check_id(session_id, "session id")
        if not isinstance(kind, str) or not kind or len(kind) > 64:
            raise InvalidInput("event kind must be a non-empty string of at most 64 characters")
        if data is not None and not isinstance(data, dict):
            raise InvalidInput("event data must be a JSON object")
        eid = check_id(event_id, "event id") if event_id else new_id()
        self._refuse_pulled(session_id)
        if parent is not None and not isinstance(parent, _Head):
            check_id(parent, "parent event id")

        def make(head: str | None, _ids: set[str] | None) -> list[Event]:
            p = head if isinstance(parent, _Head) else parent
            return [Event(eid, session_id, p, ts or now_iso(), kind, dict(data or {}))]

        return self.backend.append(session_id, make, fsync=fsync, sessions=sessions)[0]

    def _refuse_pulled(self, session_id: str) -> None:
        """A session pulled from another machine is a read-only copy (``sharing/``): its
        id is ``<id>@<machine>`` and its header says ``source: pulled``."""
        if "@" in session_id and self.backend.exists(session_id):
            header = self.backend.summary(session_id).header
            if header.source == "pulled":
                raise InvalidInput(f"session {session_id!r} was pulled from another machine "
                                   "and is read-only; start a session of your own")

    def append_events(self, session_id: str, events: Iterable[Event]) -> int:
        """Append events as they are (ids, parents, times kept), skipping ids already present."""
        self.finish_rewind()
        batch = list(events)
        if not batch:
            return 0

        def make(_head: str | None, ids: set[str] | None) -> list[Event]:
            known = ids or set()
            out = []
            for e in batch:
                if e.id in known:
                    continue
                known.add(e.id)
                e.session = session_id
                out.append(e)
            return out

        return len(self.backend.append(session_id, make, need_ids=True))

    def session(self, session_id: str) -> SessionLog:
        return self.backend.load(check_id(session_id, "session id"))

    def session_page(self, session_id: str, offset: int, limit: int) -> SessionPage:
        """``session(session_id)``'s events[offset:offset + limit], parsing only those."""
        return self.backend.page(check_id(session_id, "session id"), offset, limit)

    def session_summary(self, session_id: str) -> SessionSummary:
        return self.backend.summary(check_id(session_id, "session id"))

    def save_session_counts(self, session_ids: set[str]) -> None:
        """Keep on disk how far these sessions were counted (after ``session_summary`` of
        each), so the next process counts on from there, not from older snapshots."""
        if isinstance(self.backend, FileSessions) and self._still_here():
            self.backend.save_counts(session_ids)

    def _still_here(self) -> bool:
        """The store this Store opened is still at its path: its caches may be saved (a
        store made again there, or restored from a backup, gets none of this one's)."""
        return not self._root_held.replaced()

    def save_first_sessions(self, listing: list[SessionSummary]) -> None:
        """Keep the first page of this full listing (every session, newest first) in
        ``index/first.json``: what a server that has just started answers at once."""
        if not isinstance(self.backend, FileSessions) or not self._still_here():
            return
        data = first_page.encode(listing, len(listing))
        if data != self._first_saved:
            first_page.save(self.root / "index" / "first.json", data)
            self._first_saved = data

    def first_sessions(self) -> tuple[list[SessionSummary], int] | None:
        """The newest sessions as the last full listing saved them, and how many sessions
        there were then: not checked against the session files (None: nothing saved)."""
        if not isinstance(self.backend, FileSessions):
            return None
        return first_page.load(self.root / "index" / "first.json")

    def bytes_to_count(self, more_than: int | None = None) -> int:
        """How many bytes of session files ``sessions`` would count before answering (0 on
        a listed store, every byte on one never listed); known from one directory scan,
        which stops once past ``more_than``."""
        if not isinstance(self.backend, FileSessions):
            return 0
        return self.backend.bytes_to_count(more_than)

    def much_to_count(self) -> bool:
        """Whether a full listing would count more than ``COUNT_BEFORE_ANSWER`` bytes of
        session files first (a store never listed, or grown much since it was): then the
        sessions at hand are worth showing before it."""
        return self.bytes_to_count(more_than=COUNT_BEFORE_ANSWER) > COUNT_BEFORE_ANSWER

    def sessions_at_once(self, offset: int = 0, limit: int | None = None,
                         query: str | None = None) -> tuple[list[SessionSummary], int, bool]:
        """``sessions``' page and total, and False; or, when ``much_to_count``, those of
        ``sessions_at_hand_page`` and True (partial: what the full listing says may
        differ). Counts nothing then, so a process that exits after it leaves the store
        as it was."""
        if not self.much_to_count():
            return (*self.sessions(offset, limit, query), False)
        return (*self.sessions_at_hand_page(None, offset, limit, query), True)

    def sessions_at_hand_page(self, exact: set[str] | None = None, offset: int = 0,
                              limit: int | None = None, query: str | None = None
                              ) -> tuple[list[SessionSummary], int]:
        """The page ``[offset:offset + limit]`` of ``sessions_at_hand(exact)`` matching
        ``query``, each session not counted there with the title and end of the meta lines
        at its file's end, and how many matched. Without a query those ends are read for
        the page only (200 small reads, not 10,000); a query is matched on every session's
        latest title, so a session renamed since its header line is found by its new name
        and not by its old one, as the full listing finds it."""
        every = self.sessions_at_hand(exact)
        files = self.backend if isinstance(self.backend, FileSessions) else None
        if query:
            if files is not None:
                every = files.with_latest_meta(every)
            every = filter_sessions(every, query)
        page = every[offset : None if limit is None else offset + limit]
        if files is not None and not query:
            page = files.with_latest_meta(page)
        return page, len(every)

    def newest_open_session(self) -> str | None:
        """The id of the newest session ``record`` may append to, or None: what it appends
        to when told no session. Not the workspace's own, not one pulled from another
        machine (read-only: every such ``record`` failed), not one that ended. On a store
        ``much_to_count`` it is picked from the sessions at hand (header start times, ends
        from the meta lines at each file's end, read 64 sessions at a time) instead of
        counting every session file first, which took 33-65 s on 10,000 sessions never
        listed; a session whose end is not among its last lines (events recorded after it)
        is counted alone before it is picked, as the full listing would count it, if that
        count reads at most ``COUNT_TO_PICK`` bytes."""
        if not self.much_to_count() or not isinstance(self.backend, FileSessions):
            return next((s.header.id for s in self.sessions()[0] if _recordable(s.header)),
                        None)
        files = self.backend
        at_hand = [s for s in self.sessions_at_hand() if _recordable(s.header)]
        for i in range(0, len(at_hand), 64):
            for s in files.with_latest_meta(at_hand[i : i + 64]):
                if not _recordable(s.header):
                    continue
                if not s.counted:
                    left = files.left_to_count(s.header.id)
                    if left is None:
                        continue  # gone, or no regular file: nothing to append to
                    if left > COUNT_TO_PICK:
                        # a count this big (a planted 1 GiB file: 4.5 s, 2 GB) is not
                        # worth the pick: its end is taken from its last lines alone
                        return s.header.id
                    try:
                        s = files.summary(s.header.id)
                    except (StoreDamaged, NotFound, InvalidInput):
                        continue  # left out, as the full listing leaves it out
                    if self._still_here():
                        files.save_index()  # the next pick counts only what is new
                    if not _recordable(s.header):
                        continue
                return s.header.id
        return None

    def sessions_at_hand(self, exact: set[str] | None = None) -> list[SessionSummary]:
        """Every session newest first, as far as known without counting: the counted
        ones' summaries, the others' header lines (``counted`` False, placed by their
        header's start time, which may differ from the first event's time that places
        them once counted); the ``exact`` sessions counted whatever it costs."""
        if not isinstance(self.backend, FileSessions):
            summaries, _total = self.sessions()
            return summaries
        out = self.backend.at_hand(set(exact or ()))
        out.sort(key=listing_order, reverse=True)
        return out

    def stats(self, session_id: str) -> JSON:
        return self.session_summary(session_id).stats

    def sessions(self, offset: int = 0, limit: int | None = None, query: str | None = None
                 ) -> tuple[list[SessionSummary], int]:
        """Summaries, newest first; ``query`` matches id, title, agent and model."""
        summaries = self.backend.summaries()
        summaries.sort(key=listing_order, reverse=True)
        self.save_first_sessions(summaries)
        if query:
            summaries = filter_sessions(summaries, query)
        if isinstance(self.backend, FileSessions) and self._still_here():
            self.backend.save_index()
        total = len(summaries)
        end = None if limit is None else offset + limit
        return summaries[offset:end], total

    def find_event(self, event_id: str, session_id: str | None = None) -> Event:
        check_id(event_id, "event id")
        # this machine's sessions first: a pulled one (``<id>@<machine>``) may hold an event
        # of the same id (a teammate's history is input), and a local turn must not resolve
        # to it in whatever order the folder lists
        ids = [session_id] if session_id else sorted(self.backend.ids(), key=lambda s: "@" in s)
        for sid in ids:
            for e in self.session(sid).events:
                if e.id == event_id:
                    return e
        raise NotFound(f"no event {event_id!r}" + (f" in session {session_id!r}" if session_id
                                                    else ""))

    def children(self, session_id: str, event_id: str | None) -> list[Event]:
        return [e for e in self.session(session_id).events if e.parent == event_id]

    def conversation(self, session_id: str, head: str | None = None) -> list[Event]:
        """The events on the path root → head (the conversation as it stands)."""
        log = self.session(session_id)
        by_id = log.by_id()
        cur = head or log.head
        path: list[Event] = []
        seen: set[str] = set()
        while cur is not None and cur in by_id and cur not in seen:
            seen.add(cur)
            path.append(by_id[cur])
            cur = by_id[cur].parent
        return path[::-1]

    def fork(self, event_id: str, session_id: str | None = None) -> tuple[str, str]:
        """Move the session head to ``event_id``: new events branch from there."""
        self.finish_rewind()
        check_id(event_id, "event id")
        if session_id is not None:
            check_id(session_id, "session id")
            if not self.backend.has_event(session_id, event_id):
                raise NotFound(f"no event {event_id!r} in session {session_id!r}")
            self._refuse_pulled(session_id)  # read-only: no head line written into it
            self.backend.set_head(session_id, event_id)
            return session_id, event_id
        ev = self.find_event(event_id)
        self._refuse_pulled(ev.session)
        self.backend.set_head(ev.session, ev.id)
        return ev.session, ev.id
