"""Sessions as append-only JSONL files: ``sessions/<id>.jsonl``.

Line 1 is the header ``{"type": "session", ...}``; every event is one line
``{id, session, parent, ts, kind, data}``; control lines (``{"type": "head"}``
after a fork, ``{"type": "meta"}`` for a title or end) carry the current head,
so the head is always read from the last complete line, never the whole file.
Summaries (header + stats) are cached by file size in ``index/summaries.json``
and the stats accumulators in ``index/acc/<id>.json``, so listing a thousand
sessions reads one small file and parses no event that was already counted; a
grown session is counted from where its accumulator stopped.
"""

from __future__ import annotations

import copy
import errno
import os
import stat
import threading
from array import array
from collections import OrderedDict
from dataclasses import field
from pathlib import Path
from typing import Any

import orjson

from ..errors import (
    Conflict,
    InvalidInput,
    LinkedInStore,
    NotFound,
    StoreDamaged,
    TurnbackError,
    imported_late,
)
from ..events import Event, SessionHeader, check_id, is_id
from ..fs import instore, storeroots
from ..fs.atomic import atomic_write
from ..fs.folders import Folder, PathFolder, open_root
from ..fs.instore import store_folder
from ..fs.jsonl import (
    MAX_NESTING,
    Line,
    _torn_tail_start,
    bounded,
    dumps,
    last_line,
    last_line_of,
    loads,
    parse_object,
    read_lines,
    tail_and_last_line,
)
from ..fs.junk_tail import Budget, SetAside, set_aside
from ..fs.locks import file_lock, file_lock_free
from ..fs.privacy import make_dir
from ..fs.reading import open_append, open_append_sized, open_regular, read_regular
from ..fs.replacing import replace_file
from ..models import Problem
from ..record import record
from .backend import EventFactory
from .stats import StatsAccumulator, stats_ok

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..results import SessionLog, SessionPage, SessionSummary
    from .headers import HeaderRead


_START_ONE = "; start one with 'turnback session start'"  # what a missing session's error says


def _still_held(store_root: PathFolder) -> None:
    """``Conflict`` unless ``store_root``'s path still leads to it (folders by path): a
    store replaced or moved away is said to be, not a bare ``OSError`` (ELOOP, ENOENT)."""
    try:
        store_root.stat_self()
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOENT, errno.ENOTDIR):
            raise
        raise Conflict(
            f"the store {store_root.path} was replaced (made again, restored or moved) while "
            "this process was using it; nothing was written in it. Run the command "
            "again (in an editor: reload its window)") from None


def _is_in(folder: Folder, name: str) -> bool:
    """Whether anything stands at ``name`` in ``folder`` (a link too, not followed: it
    is refused when opened, naming it, rather than told as no session)."""
    try:
        folder.lstat(name)
    except FileNotFoundError:
        return False
    return True


def _sets_head(line: dict[str, Any]) -> bool:
    """Whether ``load`` takes its head from this line: an event it reads, a ``head`` line,
    a ``meta`` line naming one. The head read from a file's end passes over any other object
    (``{}``, a header), as ``load`` does: both name the same head (they did not before
    branch junk35: a planted ``{}`` last made the head None and the next event a root)."""
    typ = line.get("type")
    if typ is None:
        try:
            Event.from_json(line)
        except InvalidInput:
            return False
        return True
    return typ == "head" or (typ == "meta" and "head" in line)


def _kept_by_repair(line: Line) -> bool:
    """What a repair keeps in the file (``set_aside_junk``): a line the head read stops at
    (``_sets_head``), and the header as the file's first line. A second header, or a
    ``meta`` line naming no head (Turnback writes a head in each), after the last of them
    goes with the junk into the side file: kept, a repair cut after the last of those
    lines left the head read refusing the file (1,100 copies of the header: "moved 0
    bytes" and an empty side file each run; branch redteam45)."""
    return _sets_head(line.value) or (line.offset == 0 and line.value.get("type") == "session")


def _head_of(line: dict[str, Any] | None) -> str | None:
    if line is None:
        return None
    if "type" in line:
        h = line.get("head")
        return h if isinstance(h, str) else None
    i = line.get("id")
    return i if isinstance(i, str) else None


INDEX_FORMAT = 1  # of index/summaries.json
LEGACY_INDEX = "sessions.json"  # the index of earlier versions (accumulators inline)
SUMMARY_FIELDS = ("size", "ino", "lines", "events", "head", "header", "stats")
ACC_FIELDS = ("size", "ino", "lines", "events", "head", "header", "acc")
MAX_INDEX = 1 << 28  # summaries.json: about 1 KB a session; more is a damaged or planted file
MAX_ACC = 1 << 24  # one session's accumulator snapshot
PAGE_INDEXES = 16  # sessions whose event positions are kept (the ones last paged through)


# ``init=False``: it writes its own ``__init__``, compiled into the ``.pyc``, not by
# ``dataclass`` at every start (``record``'s docstring)
@record(init=False)
class _EventLines:
    """Where a session file's events are: what paging needs without parsing every line.

    Covers the file up to ``end`` (just past its last complete line); the file is
    append-only, so a grown file is read from there and a file with another inode
    or a smaller size is read again. ``load`` reads the same lines the same way.
    """

    ino: int
    size: int = 0  # file size when last checked
    end: int = 0
    line: int = 0  # number of the last complete line
    starts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))
    header: bool = False
    head: str | None = None
    problems: list[Problem] = field(default_factory=list)

    def __init__(self, ino: int, size: int = 0, end: int = 0, line: int = 0,
                 starts: array[int] | None = None, ends: array[int] | None = None,
                 header: bool = False, head: str | None = None,
                 problems: list[Problem] | None = None) -> None:
        self.ino = ino
        self.size = size
        self.end = end
        self.line = line
        self.starts = array("q") if starts is None else starts
        self.ends = array("q") if ends is None else ends
        self.header = header
        self.head = head
        self.problems = [] if problems is None else problems


MARK = 64  # bytes kept from before where a read stopped, to tell an append from a rewrite


@record(frozen=True, init=False)
class ReadLog:
    """A session file read up to ``end`` (just past its last complete line, number
    ``line``): what ``FileSessions.load_more`` continues from."""

    log: SessionLog
    ino: int
    size: int  # the file's size and modification time when read
    mtime: int
    end: int
    line: int
    mark: bytes  # the bytes just before ``end``

    def __init__(self, log: SessionLog, ino: int, size: int, mtime: int, end: int, line: int,
                 mark: bytes) -> None:
        set_ = object.__setattr__  # frozen: as dataclass's own __init__
        set_(self, "log", log)
        set_(self, "ino", ino)
        set_(self, "size", size)
        set_(self, "mtime", mtime)
        set_(self, "end", end)
        set_(self, "line", line)
        set_(self, "mark", mark)

    def continues(self, fd: int, st: os.stat_result) -> bool:
        """Whether the open file is this one, unchanged or grown by appends: the same inode,
        not shorter, and the bytes before where the read stopped still the ones read (an
        append leaves them; a write over them in place changes them, or keeps the size
        and changes the modification time). Bytes written over further back and then
        grown are not seen: the file is input either way, read as it was."""
        if st.st_ino != self.ino or st.st_size < self.end:
            return False
        if st.st_size == self.size and st.st_mtime_ns != self.mtime:
            return False
        n = len(self.mark)
        return n == 0 or os.pread(fd, n, self.end - n) == self.mark


def _event_line(event: Event) -> bytes:
    """The event's line. Data nested past what is written (``fs/jsonl.py``, ``MAX_NESTING``)
    is bounded in the event too, so what the caller keeps is what a reader will find."""
    try:
        return orjson.dumps(event.to_json()) + b"\n"
    except TypeError:  # nested too deep, or a name that is not UTF-8: the rare path
        event.data = bounded(event.data, MAX_NESTING - 1)  # the data is a level below the line
        return dumps(event.to_json()) + b"\n"


class FileSessions:
    def __init__(self, root: Path, index_path: Path, *, fsync_appends: bool = False) -> None:
        self.root = root
        self.index_path = index_path
        self.fsync_appends = fsync_appends
        self._lock = threading.Lock()
        self._index: dict[str, dict[str, Any]] | None = None
        self._index_dirty = False
        self._acc_dirty: set[str] = set()  # sessions whose accumulator is not on disk yet
        # session -> (inode, bytes read, event ids): importers skip ids already stored
        self._ids: dict[str, tuple[int, int, set[str]]] = {}
        self._pages_lock = threading.Lock()
        self._pages: OrderedDict[str, _EventLines] = OrderedDict()
        self._touched: set[str] = set()  # sessions this object wrote since ``take_touched``
        self._headers: dict[str, HeaderRead] = {}  # id -> header read, until counted
        # full listings ended: headers read across the end of one are not kept (nothing
        # would free them again)
        self._listings = 0

    def path(self, session_id: str) -> Path:
        check_id(session_id, "session id")
        return self.root / f"{session_id}.jsonl"

    # -- writing -----------------------------------------------------------------
    def create(self, header: SessionHeader) -> None:
        path = self.path(header.id)
        make_dir(self.root)
        with file_lock(path):
            if path.exists() and path.stat().st_size > 0:
                raise Conflict(f"session {header.id!r} already exists")
            line = dumps({"type": "session", "format": 1, **header.to_json(), "head": None})
            atomic_write(path, line + b"\n", fsync=self.fsync_appends)
        self._touch(header.id)

    def exists(self, session_id: str) -> bool:
        return self.path(session_id).exists()

    def missing(self, session_id: str, hint: str = "") -> TurnbackError:
        """The error for a session whose file is not there: ``LinkedInStore`` naming the link
        when the way to it holds one (``sessions/`` swapped for a link after the store was
        opened: the session is in the folder moved aside, and a start is refused too), else
        ``NotFound`` with ``hint``, what to do."""
        path = self.path(session_id)
        try:
            folder = instore.folder_of(path, create=False)
        except LinkedInStore as exc:
            return exc
        except OSError:
            folder = None  # no folder at all: no session
        if folder is not None:
            folder.close()
        return NotFound(f"no session {session_id!r}{hint}")

    def ids(self) -> list[str]:
        if not self.root.exists():
            return []
        # a file whose name is no session id is not a session Turnback wrote: left alone
        return [n[:-6] for n in os.listdir(self.root) if n.endswith(".jsonl") and is_id(n[:-6])]

    def _write_locked(self, path: Path, lines: list[bytes], fsync: bool) -> None:
        fd = open_append(path)
        try:
            size = os.fstat(fd).st_size
            self._write_at_end(fd, size, _torn_tail_start(fd, size), lines, fsync)
        finally:
            os.close(fd)

    def _write_at_end(self, fd: int, size: int, tail: int, lines: list[bytes],
                      fsync: bool) -> None:
        """``lines`` written at ``tail`` (``_torn_tail_start``, looked at under the lock
        held since) of the file ``size`` bytes long at ``fd``."""
        if tail < size:
            os.ftruncate(fd, tail)  # a crashed writer's half line: cut it off
        data = b"".join(lines)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        if fsync or self.fsync_appends:
            os.fsync(fd)

    def append(self, session_id: str, make: EventFactory, *, need_ids: bool = False,
               fsync: bool = False, sessions: Folder | None = None) -> list[Event]:
        """``sessions``: the session's folder, open (the caller's, from ``sessions_in``; not
        with ``need_ids``): the session's file, its lock and its last line reached there,
        not by path, so the event goes into the store whose root that folder was opened
        in (a checkpoint's: a copy of the store put at its path got the event, naming a
        record it lacks)."""
        if sessions is not None and need_ids:
            raise ValueError("need_ids reads by path: not with sessions")
        return self._append_in(session_id, make, fsync, sessions, need_ids=need_ids)

    def sessions_in(self, store_root: Folder, session_id: str) -> Folder | None:
        """``sessions/`` opened in ``store_root`` (the caller's, open), for ``append`` and
        ``append_free_now``; the caller closes it. Refused as by path (``missing``): none
        there is no session (``NotFound``), a link or a file put in its place is
        ``LinkedInStore`` naming it, never the system's bare "Not a directory". None for
        a link to a folder in a store the user named (``--store``, never listed in
        ``storeroots``): links in its layout are their choice, followed by path as
        before ``trust32`` (refused, every checkpoint's event failed after its record).
        Folders by path (``PathFolder``): the root's path looked at again once
        ``sessions/`` is reached, so that folder is the held root's own."""
        try:
            folder = store_root.child(self.root.name)
        except FileNotFoundError:
            raise self.missing(session_id, _START_ONE) from None
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            if isinstance(store_root, PathFolder):
                # by path, the root replaced is refused with the same ELOOP as a link at
                # ``sessions``: told as replaced, never followed as a named store's link
                _still_held(store_root)
        else:
            if isinstance(store_root, PathFolder):
                try:
                    _still_held(store_root)
                except BaseException:
                    folder.close()
                    raise
            return folder
        if storeroots.find(self.path(session_id)) is None and self.root.is_dir():
            return None
        raise LinkedInStore(
            f"{os.path.join(store_root.path, self.root.name)} is a link or no folder (put "
            "there after the store was opened); Turnback writes no session event through "
            "it, so nothing was written there. Remove it (see what it points to first), "
            "then try again")

    def _append_in(self, session_id: str, make: EventFactory, fsync: bool,
                   folder: Folder | None, *, need_ids: bool = False) -> list[Event]:
        path = self.path(session_id)
        if not (path.exists() if folder is None else _is_in(folder, path.name)):
            raise self.missing(session_id, _START_ONE)
        with file_lock(path, folder=folder):
            # one descriptor reads the head and takes the lines (it was opened twice)
            fd, size = open_append_sized(path, in_folder=folder)
            try:
                # the tail's look and the head's read share one read of the last block
                tail, last = tail_and_last_line(fd, size, shown=str(path), accept=_sets_head)
                head = _head_of(last)
                ids = self._event_ids_locked(session_id, path) if need_ids else None
                events = make(head, set(ids) if ids is not None else None)
                if events:
                    self._touch(session_id)
                    self._write_at_end(fd, size, tail, [_event_line(e) for e in events],
                                       fsync)
            finally:
                os.close(fd)
            if events and ids is not None:
                ids.update(e.id for e in events)
                st = os.stat(path)
                self._ids[session_id] = (st.st_ino, st.st_size, ids)
        return events

    def append_free_now(self, session_id: str, sessions: Folder | None = None) -> bool:
        """Whether ``append`` would take the session's file lock at once (another process
        appending, or one stopped while holding it, would make it wait up to 30 s).
        ``sessions``: the session's folder, open (``sessions_in``): the lock opened there,
        not by path (where a replaced store's path leads, it made ``sessions/`` and the
        lock file)."""
        return file_lock_free(self.path(session_id), folder=sessions)

    def _event_ids_locked(self, session_id: str, path: Path) -> set[str]:
        """The session's event ids, reading only what was appended since the last call."""
        st = os.stat(path)
        cached = self._ids.get(session_id)
        if cached is not None and cached[0] == st.st_ino and cached[1] <= st.st_size:
            _ino, start, ids = cached
        else:
            start, ids = 0, set()
        end = start
        for line in read_lines(path, start=start):
            end = line.end
            if "type" not in line.value and isinstance(line.value.get("id"), str):
                ids.add(line.value["id"])
        self._ids[session_id] = (st.st_ino, end, ids)
        return ids

    def has_event(self, session_id: str, event_id: str) -> bool:
        path = self.path(session_id)
        if not path.exists():
            raise self.missing(session_id)
        with file_lock(path):
            return event_id in self._event_ids_locked(session_id, path)

    def _control(self, session_id: str, obj: dict[str, Any], head: str | None = None,
                 keep_head: bool = True) -> None:
        path = self.path(session_id)
        if not path.exists():
            raise self.missing(session_id)
        with file_lock(path):
            current = _head_of(last_line(path, _sets_head))
            obj["head"] = current if keep_head else head
            self._touch(session_id)
            self._write_locked(path, [dumps(obj) + b"\n"], False)

    def _touch(self, session_id: str) -> None:
        with self._lock:
            self._touched.add(session_id)

    def take_touched(self) -> set[str]:
        """The sessions this object wrote (created, appended to, head or meta lines) since
        the last call: what a kept listing of them must summarize again."""
        with self._lock:
            out, self._touched = self._touched, set()
        return out

    def set_head(self, session_id: str, event_id: str) -> None:
        self._control(session_id, {"type": "head"}, head=event_id, keep_head=False)

    def update_meta(self, session_id: str, meta: dict[str, str]) -> None:
        self._control(session_id, {"type": "meta", **meta})

    def set_aside_junk(self, session_id: str, budget: Budget | None = None) -> SetAside | None:
        """The lines after the session's last record moved to a side file, when they refuse
        every append (``fs/junk_tail.set_aside``); None when they do not."""
        path = self.path(session_id)
        if not path.exists():
            raise self.missing(session_id)
        return set_aside(path, keep=_kept_by_repair, head=_sets_head, budget=budget)

    def head(self, session_id: str) -> str | None:
        path = self.path(session_id)
        fd = self._open(session_id, path)
        try:
            return _head_of(last_line_of(fd, os.fstat(fd).st_size, shown=str(path),
                                         accept=_sets_head))
        finally:
            os.close(fd)

    # -- reading -----------------------------------------------------------------
    def load(self, session_id: str) -> SessionLog:
        return self.load_more(session_id, None)[0].log

    def load_more(self, session_id: str, before: ReadLog | None) -> tuple[ReadLog, int]:
        """The session as ``load`` reads it, continuing ``before`` (an earlier answer of
        this call) over what was appended since; and how many of its events ``before``
        already held (0: read from the start).

        A session file only grows; one with another inode, shorter than what was read, or
        whose bytes before that point are not the ones read then (written over in place) is
        read again from the start. ``before`` is not changed.
        """
        path = self.path(session_id)
        fd = self._open(session_id, path)
        try:
            st = os.fstat(fd)
            if before is not None and not before.continues(fd, st):
                before = None
            if (before is not None and st.st_size == before.size  # and the same mtime
                    and before.end == before.size):
                # a file that ended with a whole line and has not grown is the one read; one
                # that ended with a torn line may have had it replaced by the next append
                # (truncated, then a line as long written: the same size, in the same tick
                # of a coarse clock the same time), so what follows ``end`` is read again
                return before, len(before.log.events)
            header: SessionHeader | None = None
            events: list[Event] = []
            head: str | None = None
            problems: list[Problem] = []
            start, number, known = 0, 0, 0
            if before is not None:
                old = before.log
                header, events, head = old.header, list(old.events), old.head
                problems = list(old.problems)
                start, number, known = before.end, before.line, len(old.events)
            data = os.pread(fd, st.st_size - start, start) if st.st_size > start else b""
        finally:
            os.close(fd)
        end = data.rfind(b"\n") + 1  # a torn or in-progress last line: read next time
        copied = False  # the header is copied before a meta line changes it
        for raw in data[:end].split(b"\n")[:-1]:
            number += 1
            v = parse_object(raw, path, number, problems)
            if v is None:
                continue
            typ = v.get("type")
            if typ is None:
                try:
                    ev = Event.from_json(v)
                except InvalidInput as exc:
                    problems.append(Problem(str(path), number, exc.message))
                    continue
                events.append(ev)
                head = ev.id
            elif typ == "session" and header is None:
                try:
                    header = SessionHeader.from_json(v)
                except InvalidInput as exc:
                    raise StoreDamaged(f"{path}:{number}: {exc.message}") from exc
                copied = True
            elif header is not None and typ == "meta":
                if not copied:
                    header, copied = copy.copy(header), True
                header.apply_meta(v)
                head = _head_of(v) if "head" in v else head
            elif typ == "head":
                head = _head_of(v)
        if header is None:
            raise StoreDamaged(f"{path} has no session header line; run 'turnback fsck'")
        from ..results import SessionLog  # where one is made: a checkpoint makes none

        log = SessionLog(header, events, head, problems)
        stop = start + end
        mark = data[max(0, end - MARK) : end] if end else (before.mark if before else b"")
        return ReadLog(log, st.st_ino, st.st_size, st.st_mtime_ns, stop, number, mark), known

    def _open(self, session_id: str, path: Path) -> int:
        """``path`` (the session's file) open for reading as a regular file, or NotFound
        (``missing``). In a store this process opened, through its ``sessions/`` as held
        (``instore.folder_of``: one ``lstat`` of it): a link swapped in for that folder
        while a server held the store is refused (``LinkedInStore``, naming it), not read
        through (redteam50, trust37); a ``--store`` store's links are followed, by design."""
        try:
            folder = instore.folder_of(path, create=False)
        except FileNotFoundError:
            raise self.missing(session_id) from None
        except LinkedInStore:
            self._refuse_swapped()  # a link: refused, said as a read's refusal
            folder = None  # something else, no folder: its error as before, by path
        try:
            if folder is None:
                return open_regular(path)
            return open_regular(path.name, folder=folder)
        except FileNotFoundError:
            raise self.missing(session_id) from None
        finally:
            if folder is not None:
                folder.close()

    def _refuse_swapped(self) -> None:
        """``LinkedInStore`` when ``sessions/`` is a link no longer the folder this process
        held: a listing's scan by path would read through it. Anything else that is no
        folder there is left to the scan's own error ("Not a directory"), as before."""
        try:
            folder = instore.folder_of(self.root / "_", create=False)
        except FileNotFoundError:
            return  # none: no session, as before
        except LinkedInStore:
            if not os.path.islink(self.root):
                return
            raise LinkedInStore(
                f"{self.root} is a link, put there after the store was opened; Turnback "
                "reads no session through it. Remove it (see what it points to first; "
                "the store's sessions may be in the folder moved aside), then try "
                "again") from None
        if folder is not None:
            folder.close()

    def page(self, session_id: str, offset: int, limit: int) -> SessionPage:
        """``load(session_id)``'s events[offset:offset + limit], head, count and problems.

        Only the returned events are parsed, once the file's event positions are
        known (the first call reads the whole file, as ``load`` does).
        """
        path = self.path(session_id)
        fd = self._open(session_id, path)
        try:
            st = os.fstat(fd)
            with self._pages_lock:
                lines = self._pages.get(session_id)
                if lines is not None:
                    self._pages.move_to_end(session_id)
                if lines is None or lines.ino != st.st_ino or lines.end > st.st_size:
                    lines = _EventLines(st.st_ino)
                if lines.size != st.st_size:
                    try:
                        self._read_event_lines(path, fd, lines, st.st_size)
                    except BaseException:
                        self._pages.pop(session_id, None)  # half read: start again next time
                        raise
                self._pages[session_id] = lines
                while len(self._pages) > PAGE_INDEXES:
                    self._pages.popitem(last=False)
                total = len(lines.starts)
                first, last = min(offset, total), min(offset + limit, total)
                starts, ends = lines.starts[first:last], lines.ends[first:last]
                head, problems = lines.head, list(lines.problems)
            events: list[Event] = []
            if starts:
                base = starts[0]
                raw = os.pread(fd, ends[-1] - base, base)
                for a, b in zip(starts, ends, strict=True):
                    events.append(Event.from_json(loads(raw[a - base : b - base])))
        finally:
            os.close(fd)
        from ..results import SessionPage  # where one is made: a checkpoint makes none

        return SessionPage(events, total, head, problems)

    @staticmethod
    def _read_event_lines(path: Path, fd: int, lines: _EventLines, size: int) -> None:
        """Extend ``lines`` over what was appended since it was last read."""
        pos, number = lines.end, lines.line
        data = os.pread(fd, size - pos, pos) if size > pos else b""
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                break  # a torn or in-progress tail: read again next time
            raw = data[start : nl + 1]
            line_start, start = pos + start, nl + 1
            number += 1
            v = parse_object(raw, path, number, lines.problems)
            if v is None:
                continue
            typ = v.get("type")
            if typ is None:
                bad = _not_an_event(v)
                if bad is not None:
                    lines.problems.append(Problem(str(path), number, bad))
                    continue
                lines.starts.append(line_start)
                lines.ends.append(pos + start)
                lines.head = v["id"]
            elif typ == "session" and not lines.header:
                try:
                    SessionHeader.from_json(v)
                except InvalidInput as exc:
                    raise StoreDamaged(f"{path}:{number}: {exc.message}") from exc
                lines.header = True
            elif lines.header and typ == "meta":
                lines.head = _head_of(v) if "head" in v else lines.head
            elif typ == "head":
                lines.head = _head_of(v)
        lines.end, lines.line, lines.size = pos + start, number, size
        if not lines.header:
            lines.size = -1  # not kept as read: the next call reads it again
            raise StoreDamaged(f"{path} has no session header line; run 'turnback fsck'")

    # -- the summary index (docs/FORMAT.md, "Caches") -----------------------------------
    def _acc_path(self, session_id: str) -> Path:
        return self.index_path.parent / "acc" / f"{session_id}.json"

    def _load_index(self) -> dict[str, dict[str, Any]]:
        """The summaries of ``index/summaries.json``; an entry not well formed is dropped."""
        if self._index is not None:
            return self._index
        index: dict[str, dict[str, Any]] = {}
        try:
            data = loads(read_regular(self.index_path, limit=MAX_INDEX))
        except (OSError, StoreDamaged, orjson.JSONDecodeError):
            data = None
        if isinstance(data, dict) and data.get("format") == INDEX_FORMAT:
            entries = data.get("sessions")
            if isinstance(entries, dict):
                # keys name files (index/acc/<id>.json): a damaged one is dropped, never used;
                # so is one whose header names another session (listed under that name)
                index = {k: e for k, e in entries.items()
                         if is_id(k) and _index_entry_ok(e, "stats") and e["header"].get("id") == k}
        elif data is None:
            index = self._load_legacy_index()
        self._index = index
        return index

    def _load_legacy_index(self) -> dict[str, dict[str, Any]]:
        """``index/sessions.json`` of earlier versions: entries with their accumulators inline."""
        legacy = self.index_path.parent / LEGACY_INDEX
        try:
            data = loads(read_regular(legacy, limit=MAX_INDEX))
        except (OSError, StoreDamaged, orjson.JSONDecodeError):
            return {}
        if not isinstance(data, dict):
            return {}
        index: dict[str, dict[str, Any]] = {}
        for sid, e in data.items():
            if not (is_id(sid) and _index_entry_ok(e, "acc") and isinstance(e.get("stats"), dict)
                    and e["header"].get("id") == sid):
                continue
            acc = {f: e[f] for f in ACC_FIELDS}
            index[sid] = {**{f: e[f] for f in SUMMARY_FIELDS}, "_acc": acc}
            self._acc_dirty.add(sid)
        self._index_dirty = True  # written in the new layout by the next save_index
        return index

    def _read_acc(self, session_id: str) -> dict[str, Any] | None:
        """The accumulator snapshot of a session, if its file is there and well formed."""
        try:
            data = loads(read_regular(self._acc_path(session_id), limit=MAX_ACC))
        except (OSError, StoreDamaged, orjson.JSONDecodeError):
            return None
        return data if _index_entry_ok(data, "acc") else None

    def save_index(self) -> None:
        """Persist cached summaries (best effort: the index is only a cache).

        The accumulators of the sessions counted since the last save go to
        ``index/acc/<id>.json`` first, then the summaries to ``index/summaries.json``.
        """
        with self._lock:
            if self._index is None or not (self._index_dirty or self._acc_dirty):
                return
            accs = {sid: self._index[sid].get("_acc") for sid in self._acc_dirty
                    if sid in self._index}
            plain = {k: {f: e[f] for f in SUMMARY_FIELDS} for k, e in self._index.items()}
            self._acc_dirty = set()
            self._index_dirty = False
        unwritten = self._write_counts(accs)
        failed = bool(unwritten)
        try:
            with store_folder(self.index_path.parent.parent, [self.index_path.parent.name]
                              ) as folder:
                replace_file(folder, self.index_path.name,
                             dumps({"format": INDEX_FORMAT, "sessions": plain}))
        except OSError:
            failed = True
        if failed:
            with self._lock:
                self._index_dirty = True  # try again next time
                self._acc_dirty |= unwritten  # (else forgotten until the session changes)
            return
        with self._lock:
            for sid, acc in accs.items():  # kept on disk now: memory holds the summaries only
                e = self._index.get(sid) if self._index is not None else None
                if e is not None and e.get("_acc") is acc and sid not in self._acc_dirty:
                    del e["_acc"]
        try:
            instore.unlink(self.index_path.parent / LEGACY_INDEX, missing_ok=False)
        except OSError:
            pass

    def save_counts(self, session_ids: set[str]) -> None:
        """Write the accumulators of these sessions to ``index/acc/`` now (best effort).

        A kept listing refreshed session by session never calls ``save_index`` (which
        rewrites every summary); without this a server killed after hours of refreshes
        left the next process to count those sessions again from older snapshots. The
        summaries file is left to ``save_index``: a session whose entry there is older
        is counted from its accumulator, which then covers the whole file.
        """
        with self._lock:
            if self._index is None:
                return
            accs = {sid: self._index[sid].get("_acc") for sid in session_ids & self._acc_dirty
                    if sid in self._index}
            self._acc_dirty -= set(accs)
        failed = self._write_counts(accs)
        with self._lock:
            self._acc_dirty |= failed  # the next save tries again
            for sid, acc in accs.items():
                e = self._index.get(sid) if self._index is not None else None
                if (sid not in failed and e is not None and e.get("_acc") is acc
                        and sid not in self._acc_dirty):
                    del e["_acc"]  # on disk now: memory keeps the summary only

    def _write_counts(self, accs: dict[str, Any]) -> set[str]:
        """Write these accumulators to ``index/acc/<id>.json``; the sessions not written.
        Through the folder opened without following a link: one swapped in while a
        server runs would have had a file named by any session's id made, or replaced,
        wherever it leads."""
        failed = {sid for sid, acc in accs.items() if acc is not None}
        if not failed:
            return failed
        try:
            with store_folder(self.index_path.parent.parent,
                              [self.index_path.parent.name, "acc"]) as folder:
                for sid in list(failed):
                    try:
                        replace_file(folder, f"{sid}.json", dumps(accs[sid]))
                        failed.discard(sid)
                    except OSError:
                        pass
        except OSError:
            pass
        return failed

    def summaries(self) -> list[SessionSummary]:
        """Every session's summary: one directory scan, one stat per file, cached counts."""
        self._refuse_swapped()
        if not self.root.exists():
            return []
        out: list[SessionSummary] = []
        stale: list[str] = []
        with self._lock:
            index = self._load_index()
            with os.scandir(self.root) as it:
                for de in it:
                    name = de.name
                    if not name.endswith(".jsonl"):
                        continue
                    sid = name[:-6]
                    if sid not in index:
                        stale.append(sid)
                        continue
                    try:
                        st = de.stat()
                    except FileNotFoundError:
                        continue
                    got = self._indexed(index, sid, st)
                    if got is not None:
                        out.append(got)
                        continue
                    stale.append(sid)
        for sid in stale:
            try:
                out.append(_named_by(self.summary(sid), sid))
            except (StoreDamaged, NotFound, InvalidInput):
                continue  # reported by fsck; listing keeps working
        with self._lock:
            self._headers = {}  # every session counted: ``at_hand``'s 8.4 MB (10,000) freed
            self._listings += 1
        return out

    def _indexed(self, index: dict[str, dict[str, Any]], sid: str, st: os.stat_result
                 ) -> SessionSummary | None:
        """``sid``'s summary from the summary index if its entry is of the file as it is
        (size and inode) and names it; else None. A damaged entry is dropped: the session
        is counted again."""
        entry = index[sid]
        if entry["size"] != st.st_size or entry["ino"] != st.st_ino:
            return None
        try:
            return _named_by(self._summary_from(entry), sid)
        except (InvalidInput, TypeError, ValueError, KeyError):
            del index[sid]
            return None

    def bytes_to_count(self, more_than: int | None = None) -> int:
        """How many bytes of session files a full listing would count (one directory scan,
        one stat a file, against the summary index): what a listing costs, known cheaply;
        the scan stops once past ``more_than``. An accumulator without its summary entry
        is not looked at (counted as if none)."""
        self._refuse_swapped()
        if not self.root.exists():
            return 0
        total = 0
        with self._lock:
            index = self._load_index()
            with os.scandir(self.root) as it:
                for de in it:
                    if not de.name.endswith(".jsonl") or not is_id(de.name[:-6]):
                        continue
                    try:
                        st = de.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    entry = index.get(de.name[:-6])
                    done = (entry["size"] if entry is not None and entry["ino"] == st.st_ino
                            and entry["size"] <= st.st_size else 0)
                    total += st.st_size - done
                    if more_than is not None and total > more_than:
                        break
        return total

    def left_to_count(self, session_id: str) -> int | None:
        """How many bytes of one session's file its count would read (``bytes_to_count``'s
        rule for that file alone); None if no regular file is there."""
        try:
            st = os.lstat(self.path(session_id))
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        with self._lock:
            entry = self._load_index().get(session_id)
        done = (entry["size"] if entry is not None and entry["ino"] == st.st_ino
                and entry["size"] <= st.st_size else 0)
        return int(st.st_size - done)

    def at_hand(self, exact: set[str]) -> list[SessionSummary]:
        """Every session, without counting: its summary where the index holds one that
        matches its file, else its header line alone (``counted`` False); the ``exact``
        ones (this server's writes) counted. A file whose first line is no session header
        is left out until it is counted, as are names that are no session id."""
        from ..results import SessionSummary  # where one is made: a checkpoint makes none

        self._refuse_swapped()
        if not self.root.exists():
            return []
        out: list[SessionSummary] = []
        headers: list[tuple[int, str]] = []  # (inode, session) shown from its header line
        with self._lock:
            index = self._load_index()
            with os.scandir(self.root) as it:
                for de in it:
                    sid = de.name[:-6]
                    if not de.name.endswith(".jsonl") or not is_id(sid) or sid in exact:
                        continue
                    if sid not in index:  # never counted: the inode the scan gives is enough
                        headers.append((de.inode(), sid))
                        continue
                    try:
                        st = de.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    got = self._indexed(index, sid, st)
                    if got is not None:
                        out.append(got)
                        continue
                    headers.append((st.st_ino, sid))  # counted by the full listing
            kept = {sid: k for ino, sid in headers
                    if (k := self._headers.get(sid)) is not None and k.ino == ino}
            listings = self._listings
        # in inode order: files made one after another lie so on disk
        unread = sorted((ino, sid) for ino, sid in headers if sid not in kept)
        read: dict[str, HeaderRead] = {}
        if unread:
            try:
                folder = open_root(str(self.root))
            except OSError:  # moved away since the scan: its files are not there to show
                headers = []
            else:
                with imported_late("turnback.sessions.headers"):
                    # here: a process that only appends (a CLI's checkpoint) needs none of it
                    from .headers import read_headers

                with folder:
                    got_all = read_headers([f"{sid}.jsonl" for _ino, sid in unread], folder)
                read = {sid: r for (_ino, sid), r in zip(unread, got_all, strict=True)
                        if r is not None}
        for _ino, sid in headers:
            r = read.get(sid) or kept.get(sid)
            if r is not None and r.header is not None and r.header.id == sid:
                out.append(SessionSummary(r.header, {}, 0, None, counted=False))
        with self._lock:
            if listings == self._listings:  # else a full listing freed them meanwhile
                self._headers.update(read)  # a header line never changes under one inode
        for sid in exact:
            try:
                out.append(_named_by(self.summary(sid), sid))
            except (StoreDamaged, NotFound, InvalidInput):
                continue  # left out, as a full listing does
        return out

    def with_latest_meta(self, shown: list[SessionSummary]) -> list[SessionSummary]:
        """``shown`` with each session not counted given the title and end of the meta
        lines at its file's end (``read_latest_meta``): a page of ``at_hand`` showing a
        session renamed or ended since its header line as it is. Counted ones as given."""
        from ..results import SessionSummary  # where one is made: a checkpoint makes none

        todo = [s for s in shown if not s.counted]
        if not todo:
            return shown
        try:
            folder = open_root(str(self.root))
        except OSError:
            return shown
        with imported_late("turnback.sessions.headers"):
            from .headers import read_latest_meta

        with folder:
            metas = read_latest_meta([f"{s.header.id}.jsonl" for s in todo], folder)
        newer: dict[int, SessionSummary] = {}
        for s, lines in zip(todo, metas, strict=True):
            if lines:
                header = copy.copy(s.header)  # the kept one stays the header line
                for meta in lines:
                    header.apply_meta(meta)
                newer[id(s)] = SessionSummary(header, {}, 0, None, counted=False)
        return [newer.get(id(s), s) for s in shown]

    def summary(self, session_id: str) -> SessionSummary:
        """Header and stats, counting only the lines added since the cached entry."""
        path = self.path(session_id)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise self.missing(session_id) from None
        with self._lock:
            index = self._load_index()
            entry = index.get(session_id)
            if entry is not None and entry["size"] == st.st_size and entry["ino"] == st.st_ino:
                try:
                    return self._summary_from(entry)
                except (InvalidInput, TypeError, ValueError, KeyError):
                    del index[session_id]  # a damaged entry: count the session again
                    entry = None
            acc_entry = entry.get("_acc") if entry is not None else None
        # count the new part outside the index lock, from the last accumulator snapshot
        if acc_entry is None:
            acc_entry = self._read_acc(session_id)
        if acc_entry is not None and (acc_entry["size"] > st.st_size
                                      or acc_entry["ino"] != st.st_ino):
            acc_entry = None  # rewritten or truncated: count again
        acc = StatsAccumulator()
        header: SessionHeader | None = None
        start, first_line, count, head = 0, 1, 0, None
        if acc_entry is not None:
            try:
                acc = StatsAccumulator(acc_entry["acc"])
                header = SessionHeader.from_json(acc_entry["header"])
            except (InvalidInput, TypeError, ValueError, KeyError, AttributeError):
                acc, header = StatsAccumulator(), None  # a damaged snapshot: count again
            else:
                start, first_line, count, head = (acc_entry["size"], acc_entry["lines"] + 1,
                                                  acc_entry["events"], acc_entry["head"])
        end = start
        lines = first_line - 1
        for line in read_lines(path, start=start, first_line=first_line):
            v = line.value
            end = line.end
            lines = line.number
            typ = v.get("type")
            if typ is None:
                try:
                    ev = Event.from_json(v)
                except InvalidInput:
                    continue
                acc.add(ev)
                count += 1
                head = ev.id
            elif typ == "session" and header is None:
                try:
                    header = SessionHeader.from_json(v)
                except InvalidInput:
                    continue
            elif typ == "meta" and header is not None:
                header.apply_meta(v)
                head = _head_of(v)
            elif typ == "head":
                head = _head_of(v)
        if header is None:
            raise StoreDamaged(f"{path} has no session header line; run 'turnback fsck'")
        snapshot = {
            "size": end, "ino": st.st_ino, "lines": lines, "events": count, "head": head,
            "header": header.to_json(), "acc": acc.state(),
        }
        entry = {f: snapshot[f] for f in SUMMARY_FIELDS if f != "stats"}
        entry["stats"] = acc.result(header.started, header.ended)
        entry["_acc"] = snapshot
        with self._lock:
            self._load_index()[session_id] = entry
            self._index_dirty = True
            self._acc_dirty.add(session_id)
        return self._summary_from(entry)

    @staticmethod
    def _summary_from(entry: dict[str, Any]) -> SessionSummary:
        """The summary of an index entry; built once per entry, then reused."""
        from ..results import SessionSummary  # where one is made: a checkpoint makes none

        summary = entry.get("_summary")
        if summary is None:
            if "filesEdited" not in entry["stats"]:
                raise KeyError("filesEdited")  # counted by an earlier version: count again
            if not stats_ok(entry["stats"]):  # planted or damaged: sorted and printed later
                raise ValueError("summary stats not well formed")
            header = SessionHeader.from_json(entry["header"])
            summary = entry["_summary"] = SessionSummary(header, entry["stats"], entry["events"],
                                                         entry["head"])
        assert isinstance(summary, SessionSummary)
        return summary


def _named_by(summary: SessionSummary, session_id: str) -> SessionSummary:
    """``summary`` if its header names the file it was read from. The store names every
    file by its header's id; a file whose header names another session (``real``, or a
    path such as ``../x``) is renamed or planted: listed, it would show as that session
    (twice, under a title of the planter's) and open the other file."""
    if summary.header.id != session_id:
        raise InvalidInput(
            f"session file {session_id}.jsonl has a header naming session "
            f"{summary.header.id!r}: left out of listings; rename the file to its header's "
            "id if it is that session, or move it out of the store")
    return summary


def _not_an_event(v: dict[str, Any]) -> str | None:
    """What ``Event.from_json(v)`` would refuse, without building the event (None: it is one)."""
    for key in ("id", "session", "ts", "kind"):
        if not isinstance(v.get(key), str):
            return f"event field {key!r} is missing or not a string"
    parent = v.get("parent")
    if parent is not None and not isinstance(parent, str):
        return "event field 'parent' must be a string or null"
    data = v.get("data")
    if data is not None and not isinstance(data, dict):
        return "event field 'data' must be an object"
    return None


def _index_entry_ok(e: Any, body: str) -> bool:
    """A summary (``body`` "stats") or accumulator ("acc") entry of the index is well formed."""
    return (
        isinstance(e, dict)
        and all(isinstance(e.get(f), int) for f in ("size", "ino", "lines", "events"))
        and isinstance(e.get("head"), (str, type(None)))
        and isinstance(e.get("header"), dict)
        and isinstance(e.get(body), dict)
    )
