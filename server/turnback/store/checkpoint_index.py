"""The list of checkpoints: ``checkpoints.jsonl``, append-only.

A line is a checkpoint record (``models.Checkpoint.to_json``) or a drop
``{"type": "drop", "id": ...}`` written by retention. Appending the record is
the commit point of a checkpoint: its objects are durable before it — or, for a
small checkpoint, the log frame holding its objects and its record is
(``objects/packlog.py``), and the line here follows without a wait: ``restore``
puts back the lines a crash lost.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import InvalidInput, NotFound, StoreDamaged, TurnbackError
from ..events import is_id
from ..fs.atomic import atomic_write
from ..fs.bounded_lines import whole_lines
from ..fs.folders import Folder
from ..fs.jsonl import (
    MAX_LINE,
    NoLastObject,
    append_lines,
    last_line,
    loads,
    parse_object,
)
from ..fs.reading import open_regular, read_regular
from ..models import Checkpoint, Problem
from ..objects.objectstore import is_hash

# restore looks for each log's last record among the lines in this many bytes at the
# file's end before reading it all: ~200 records, far more than the logs a merge leaves
TAIL_BYTES = 64 << 10


def bad_ids(cp: Checkpoint) -> str | None:
    """What is wrong with the ids of a record read from the file (they name files), if any."""
    if not is_hash(cp.tree):
        return f"its tree id {cp.tree[:80]!r} is not 64 lowercase hex digits"
    for what, value in (("id", cp.id), ("sessionId", cp.session_id), ("eventId", cp.event_id)):
        if value is not None and not is_id(value):
            return f"its {what} {str(value)[:80]!r} is not a valid id"
    if not all(isinstance(p, str) for p in cp.absent):
        return "its absent list holds something other than paths"
    if not all(isinstance(s, dict) for s in cp.skipped):
        return "its skipped list holds something other than records"
    return None


def is_record(value: dict[str, Any]) -> bool:
    """Whether an object of the file is one of its records, a checkpoint's (an id and a
    tree) or a drop line: what a look at its last record stops at (``{}`` is passed over,
    as the full read skips it; trust36)."""
    if value.get("type") == "drop":
        return True
    return isinstance(value.get("id"), str) and isinstance(value.get("tree"), str)


class CheckpointIndex:
    def __init__(self, path: Path, mended: Path | None = None) -> None:
        self.path = path
        # the mark of the last whole repair (``_mended_through``): the damaged lines it
        # covered stay in this append-only file, and made every later process repair again
        self.mended = mended
        self._lock = threading.Lock()
        self._cache: list[Checkpoint] = []  # by time; within a millisecond, as appended
        self._seq: dict[str, int] = {}  # id → the number of the line its record is on
        self._by_id: dict[str, Checkpoint] = {}
        self._seen: set[str] = set()  # every id of a record or a drop line read
        self._size = -1
        self._ino = -1
        self._end = 0  # bytes read: the end of the last complete line
        self._lines = 0  # lines read (for the line numbers of problems)
        self.problems: list[Problem] = []
        # records a repair (``restore(every=True)``) put back: said to the user (the CLI's
        # listing, fsck) as damage found and mended
        self.repaired = 0

    def _refresh(self) -> None:
        try:
            st = self.path.lstat()
        except FileNotFoundError:
            self._cache, self._by_id, self._size, self._end, self._lines = [], {}, 0, 0, 0
            return
        if st.st_size == self._size and st.st_ino == self._ino:
            return
        if st.st_ino != self._ino or st.st_size < self._end:
            # replaced or cut (not an append): read it all again
            self._cache, self._by_id, self._end, self._lines = [], {}, 0, 0
            self._seq, self._seen = {}, set()
            self.problems = []
        try:
            f = os.fdopen(open_regular(self.path), "rb")
        except FileNotFoundError:
            return
        items = self._by_id
        added: list[Checkpoint] = []
        dropped = False
        number = self._lines
        with f:
            f.seek(self._end)
            raws, took = _whole_lines(f, number, self.path, self.problems)
            self._end += took
            for raw in raws:
                number += 1
                if raw is None:
                    continue  # a line past MAX_LINE: a problem, not read
                v = parse_object(raw, self.path, number, self.problems)
                if v is None:
                    continue
                if v.get("type") == "drop":
                    self._seen.add(str(v.get("id")))
                    if items.pop(str(v.get("id")), None) is not None:
                        dropped = True
                    continue
                try:
                    cp = Checkpoint.from_json(v)
                except (KeyError, TypeError, ValueError) as exc:
                    self.problems.append(Problem(str(self.path), number,
                                                 f"bad checkpoint ({exc})"))
                    continue
                bad = bad_ids(cp)
                if bad is not None:
                    # never used: its tree id would become a path (fsck lists the line)
                    self.problems.append(Problem(str(self.path), number,
                                                 f"bad checkpoint {cp.id[:80]!r} ({bad})"))
                    continue
                self._seen.add(cp.id)
                if cp.id in items:
                    dropped = True  # a record written again replaces the old one
                items[cp.id] = cp
                self._seq[cp.id] = number
                added.append(cp)
        self._lines = number
        seq = self._seq

        def order(cp: Checkpoint) -> tuple[str, int]:
            # ids are random: two checkpoints of one millisecond keep the order they
            # were taken in (what "latest" and attribution's steps rely on)
            return cp.ts, seq[cp.id]

        if dropped:
            self._cache = sorted(items.values(), key=order)
        elif added:
            cache = self._cache
            if cache and order(added[0]) < order(cache[-1]):
                cache.extend(added)
                cache.sort(key=order)
            else:
                added.sort(key=order)
                cache.extend(added)
        self._size, self._ino = st.st_size, st.st_ino

    def all(self) -> list[Checkpoint]:
        with self._lock:
            self._refresh()
            return list(self._cache)

    def add(self, cp: Checkpoint, *, fsync: bool, folder: Folder | None = None) -> None:
        """Append ``cp``'s record (and take its lock) in ``folder``: the folder holding the
        file as the store last looked at it (the caller's, open: a ``dup`` of the held
        root, ``HeldFolder.folder``), so a store replaced after that look gets no line
        (redteam38); None (none held: Windows; a caller with no store) by path."""
        append_lines(self.path, [cp.to_json()], fsync=fsync, folder=folder)

    def restore(self, logged: Callable[[Callable[[bytes], bool], bool], Iterable[bytes]],
                stored: Callable[[str], bool], *, fsync: bool, every: bool = False,
                folder: Callable[[], Folder | None] = lambda: None) -> int:
        """Append the logged records whose id no line holds, nor a drop: lines a crash
        took from the file's unsynced tail after their log frames were on disk.
        ``logged(missing, every)`` yields the records ``missing`` asks for
        (``packlog.records``). A record is checked as a line read here is, and its tree
        must be ``stored``; one that fails is left out (fsck names the log frame if its
        bytes are damaged). ``every``: a repair, each log read whole (lines lost from the
        file's middle; also when a line of its last ``TAIL_BYTES`` is damaged); what it
        put back is counted in ``repaired``. Returns how many were appended. ``folder``
        opens the folder to append them in (as ``add``'s; called only when there are
        records to put back, closed here): the held root, so records read from the
        logs of the store that was opened never go into one put at its path since."""
        tail = self._tail_ids()  # the whole file read only for a record not among its lines
        if tail is None:
            every, tail = True, set()
        full: set[str] | None = None
        covered: tuple[int, int, int] | None = None
        if every:  # what this repair reads of the file: damage up to there is covered
            with self._lock:
                self._refresh()
                full = set(self._seen)
                covered = (self._ino, self._end, self._lines)

        def held(cp_id: object) -> bool:
            """Whether a line holds ``cp_id``: first among the file's last lines (where
            the last record of every log is, unless a crash lost it), the whole file
            read only when it is not there (1,000 checkpoints: ~5 ms at every open)."""
            nonlocal full
            if cp_id in tail:
                return True
            if full is None:
                with self._lock:
                    self._refresh()
                    full = set(self._seen)
            return cp_id in full

        def missing(raw: bytes) -> bool:
            try:
                v = loads(raw)
            except ValueError:
                return True  # not a record: read on (its frame's hash will tell)
            return not (isinstance(v, dict) and held(v.get("id")))

        found: list[tuple[Checkpoint, dict[str, object]]] = []
        taken: set[str] = set()
        for raw in logged(missing, every):
            try:
                v = loads(raw)
                cp = Checkpoint.from_json(v) if isinstance(v, dict) else None
            except (KeyError, TypeError, ValueError):
                continue
            if (cp is None or cp.id in taken or held(cp.id) or bad_ids(cp) is not None
                    or not stored(cp.tree)):
                continue
            taken.add(cp.id)
            found.append((cp, v))
        if found:
            found.sort(key=lambda f: f[0].ts)
            # the record as its writer wrote it: a key this version does not know (a newer
            # Turnback's, which readers ignore) is put back with the rest
            into = folder()
            try:
                append_lines(self.path, [v for _, v in found], fsync=fsync, folder=into)
            finally:
                if into is not None:
                    into.close()
            if every:
                self.repaired += len(found)
        if covered is not None:
            self._mark_mended(covered)
        return len(found)

    def _mark_mended(self, covered: tuple[int, int, int]) -> None:
        """Note that every log was read whole against the file's first ``end`` bytes
        (``lines`` lines) while it had inode ``ino``: a damaged line there needs no repair
        again (a cache: lost or unwritable, the next process repairs once more)."""
        if self.mended is None:
            return
        ino, end, lines = covered
        try:
            atomic_write(self.mended, f"{ino} {end} {lines}\n".encode(), fsync=False)
        except (OSError, TurnbackError):
            pass

    def _mended_through(self, st: os.stat_result) -> tuple[int, int]:
        """The bytes and lines of the file (``st``) a whole repair read already, (0, 0)
        when none did. The mark is input: one naming another inode or past the file's end
        (the file replaced or cut) is ignored; a planted one can stop only the open's and a
        listing's repair, never the merge's or gc's, which always read every log."""
        if self.mended is None:
            return 0, 0
        try:
            parts = read_regular(self.mended, limit=64).split()
            ino, end, lines = (int(p) for p in parts) if len(parts) == 3 else (-1, 0, 0)
        except (OSError, StoreDamaged, ValueError):
            return 0, 0
        if ino != st.st_ino or not 0 <= end <= st.st_size or lines < 0:
            return 0, 0
        return end, lines

    def problem_count(self) -> int:
        """How many lines of the file could not be read (garbage or zeros a power cut left
        in its middle, a line cut short and then followed, a hand), the whole file read:
        the lines lost there may be records whose logs hold later ones too, which a
        ``restore`` reading each log from its end stops before (``every``). Those a
        whole repair covered already (``_mended_through``) are not counted."""
        with self._lock:
            self._refresh()
            problems = self.problems
        if not problems:
            return 0  # the mark is read only where there is damage: a listing's cost stays
        try:
            _, lines = self._mended_through(self.path.lstat())
        except OSError:
            lines = 0
        return sum(1 for p in problems if p.line > lines)

    def _tail_ids(self) -> set[str] | None:
        """The ids that the complete lines in the file's last ``TAIL_BYTES`` hold, each
        taken as ``_refresh`` takes it (a valid record's, a drop's): a subset of what
        reading the whole file gives. A torn last line holds none. None when one of those
        lines cannot be read (damage: ``restore`` then reads every record)."""
        try:
            fd = open_regular(self.path)
        except (OSError, StoreDamaged):
            return set()
        try:
            st = os.fstat(fd)
            size = st.st_size
            start = max(0, size - TAIL_BYTES)
            data = os.pread(fd, size - start, start)
        finally:
            os.close(fd)
        if start:
            skip = data.find(b"\n") + 1 if b"\n" in data else len(data)
            data, start = data[skip:], start + skip
        mended: int | None = None
        out: set[str] = set()
        for raw in data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]:
            start += len(raw) + 1  # the end of this line
            v = parse_object(raw, self.path, 0, None)
            if v is None:
                if raw.strip():
                    if mended is None:
                        mended, _ = self._mended_through(st)
                    if start > mended:
                        return None  # not JSON, or not an object: a damaged line
                continue
            if v.get("type") == "drop":
                out.add(str(v.get("id")))
                continue
            try:
                cp = Checkpoint.from_json(v)
            except (KeyError, TypeError, ValueError):
                continue
            if bad_ids(cp) is None:
                out.add(cp.id)
        return out

    def last_tree(self) -> str | None:
        """The tree the file's last line names, if that line is a checkpoint's record: a
        tree the store holds, known from one read of the file's end rather than the object
        index (a fresh process's no-op, whose one look-up of its recorded root read every
        pack index: +4.5 M instructions in its serial tail, bench/RESULTS.md, ``noop28``).
        Only a line this index would list is believed: a planted ``{"tree": ...}``, or a
        record whose ids name no object, made the no-op commit the root a planted stat
        cache named, even ``../../x`` (redteam35). None after a run of junk lines too
        (``NoLastObject``): the look-up is made the usual way."""
        try:
            line = last_line(self.path, is_record)
        except NoLastObject:
            return None
        if line is None or line.get("type") == "drop":
            return None
        try:
            cp = Checkpoint.from_json(line)
        except (KeyError, TypeError, ValueError):
            return None
        return cp.tree if bad_ids(cp) is None else None

    def drop(self, ids: list[str], *, fsync: bool) -> None:
        """Drop lines for ``ids`` (retention, ``store/gc.py``), by path as every other step
        of a gc: the gc refuses a store replaced under its process first."""
        if ids:
            append_lines(self.path, [{"type": "drop", "id": i} for i in ids], fsync=fsync)

    def get(self, cp_id: str) -> Checkpoint | None:
        with self._lock:
            self._refresh()
            return self._by_id.get(cp_id)

    def resolve(self, ref: object, where: str = "checkpoint") -> Checkpoint:
        """Full id, a unique prefix of 4+ characters, ``latest`` or ``latest~N``."""
        if not isinstance(ref, str) or not ref:
            raise InvalidInput(f"{where} must be a checkpoint id (a non-empty string)")
        items = self.all()
        if ref == "latest" or ref.startswith("latest~"):
            # a teammate's pulled checkpoint is never "latest": rewinding there is asked by id
            full = [c for c in items if not c.partial and c.origin is None]
            n = 0
            if ref != "latest":
                try:
                    n = int(ref[7:])
                except ValueError:
                    raise InvalidInput(f"{where} {ref!r}: write latest~N with N a number") from None
            if n < 0 or n >= len(full):
                raise NotFound(f"no checkpoint {ref!r}: the store has {len(full)} checkpoints")
            return full[-1 - n]
        exact = self._by_id.get(ref)
        if exact is not None:
            return exact
        if len(ref) >= 4:
            matches = [c for c in items if c.id.startswith(ref)]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                raise InvalidInput(
                    f"{where} {ref!r} is ambiguous: it starts {len(matches)} checkpoint ids; "
                    "give more characters"
                )
        raise NotFound(f"no checkpoint {ref!r} in {self.path.parent}; list them with "
                       "'turnback checkpoints'")


def _whole_lines(f: BinaryIO, number: int, path: Path, problems: list[Problem]
                 ) -> tuple[list[bytes | None], int]:
    """The file's whole lines from where ``f`` stands, each without its newline (None for
    one longer than ``MAX_LINE``, a problem said here; ``number``: the lines before), and
    the bytes they take, bad lines after the last good one too (their problems are said
    once). A final line with no newline (a write in progress, a torn tail) is left out.
    Past ``MAX_LINE`` bytes, in bounded pieces with a sparse file's holes passed over
    (``bounded_lines``): the file was read whole from the last offset, a planted sparse
    2 GiB held in memory by every listing (redteam48), then read zeros and all (trust37)."""
    start = f.tell()
    if os.fstat(f.fileno()).st_size - start <= MAX_LINE:
        # no longer line fits: one read and a split, as before (a call a line costs a
        # listing's count)
        data = f.read()
        cut = data.rfind(b"\n") + 1
        return list(data[:cut].split(b"\n")[:-1]), cut
    out: list[bytes | None] = []
    end = start
    for raw, past in whole_lines(f.fileno(), start, MAX_LINE):
        out.append(raw)
        end = past
        if raw is None:
            problems.append(Problem(str(path), number + len(out),
                                    f"longer than {MAX_LINE} bytes: not read"))
    return out, end - start
