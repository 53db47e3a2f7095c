"""Append-only JSON Lines files that survive crashes and concurrent writers.

- Appends take an exclusive file lock, write whole lines in one ``write`` and
  flush; ``fsync`` is the caller's choice (commit points).
- A torn last line (a writer died mid-line) is skipped on read and cut off by
  the next append, so the file heals without losing acknowledged lines.
- A bad line in the middle is reported with its line number; the rest is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ..errors import StoreDamaged
from ..record import record
from .bounded_lines import whole_lines
from .folders import Folder
from .locks import file_lock
from .privacy import FILE_MODE, make_dir
from .reading import open_append_sized, open_regular


# ``init=False``: it writes its own ``__init__``, compiled into the ``.pyc``, not by
# ``dataclass`` at every start (``record``'s docstring)
@record(init=False)
class Problem:
    """A damaged spot found while reading (a bad line, a torn tail)."""

    file: str
    line: int
    message: str

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file = file
        self.line = line
        self.message = message

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"



@record(init=False)
class Line:
    """One JSON line read, and where it starts."""

    number: int  # 1-based
    offset: int  # byte offset of the line start
    value: dict[str, Any]
    end: int  # byte offset just past the line's newline

    def __init__(self, number: int, offset: int, value: dict[str, Any], end: int) -> None:
        self.number = number
        self.offset = offset
        self.value = value
        self.end = end


# Containers a value Turnback writes may nest. orjson reads 1,024 levels but writes 254, and
# the standard library's encoder stops near Python's recursion limit (1,000): an agent's
# transcript line nested 300 deep was imported, then every export, ``--json`` listing and
# push of the store failed on it; one nested 1,000 deep failed its whole file's import. Real
# transcripts nest 10 deep at most (2,558 records of ../shared/transcripts); 128 leaves room
# for the envelopes a line is later wrapped in (an event, a JSON-RPC answer).
MAX_NESTING = 128
NESTED_TOO_DEEP = f"(nested deeper than {MAX_NESTING} levels: not kept)"


def bounded(value: Any, depth: int = MAX_NESTING) -> Any:
    """``value`` with every list or object ``depth`` levels down replaced by
    ``NESTED_TOO_DEEP``; the value itself when nothing was that deep."""
    if isinstance(value, dict):
        if depth <= 0:
            return NESTED_TOO_DEEP
        out = {k: bounded(v, depth - 1) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    if isinstance(value, (list, tuple)):
        if depth <= 0:
            return NESTED_TOO_DEEP
        items = [bounded(v, depth - 1) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def dumps(obj: Any) -> bytes:
    """One JSON line's bytes. A file name that is not UTF-8 survives as ``\\udcXX`` escapes.

    Such names reach Python as strings with lone surrogates (``os.fsdecode``);
    orjson refuses them, the standard library escapes them and ``loads`` reads
    them back, so rewinding a workspace that holds one still works. A value nested
    past ``MAX_NESTING`` (which orjson refuses too) is written ``bounded``.
    """
    try:
        return orjson.dumps(obj)
    except TypeError:
        pass
    obj = bounded(obj)  # only after orjson refused: a line of a usual depth is not walked
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode()


def loads(raw: bytes) -> Any:
    """Parse what ``dumps`` wrote; raises ``orjson.JSONDecodeError`` on bad JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if b"\\ud" not in raw.lower():
            raise
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            # RecursionError: a line orjson refused as nested past 1,024 levels, holding a
            # "\\ud" besides; it escaped every session listing, load and fsck of the store
            pass
        raise


TAIL_FIRST = 4096  # bytes a look at a file's end reads first, then 4 times more each time
TAIL_MOST = 65536  # ... up to this much a read, looking for a torn tail's start


def _torn_tail_start(fd: int, size: int) -> int:
    """Offset where a final line without ``\\n`` starts (== size when the file ends cleanly)."""
    return _tail_read(fd, size)[0]


def _tail_read(fd: int, size: int, most: int | None = None) -> tuple[int, bytes | None]:
    """``_torn_tail_start`` and, when the file ends cleanly, the last ``TAIL_FIRST`` bytes
    it read to see that: a reader of the last line starts from them instead of reading
    them again (a session's append read the same 4 KiB three times). ``most``: bytes read
    back at most; ``_TornPastBound`` when the torn tail begins before them."""
    if size == 0:
        return 0, None
    floor = 0 if most is None else max(0, size - most)
    pos = size
    # a few lines first, growing: every append and ``last_line`` looks here, and a clean
    # end is the rule (64 KiB read each time cost a 20 KB session file's whole tail,
    # three times an at-once checkpoint; bench/RESULTS.md, branch ``atonce26``)
    block = TAIL_FIRST
    while pos > floor:
        start = max(floor, pos - block)
        chunk = os.pread(fd, pos - start, start)
        if pos == size and chunk.endswith(b"\n"):
            return size, chunk
        idx = chunk.rfind(b"\n")
        if idx >= 0:
            return start + idx + 1, None
        pos = start
        block = min(block * 4, TAIL_MOST)
    if floor > 0:
        raise _TornPastBound
    return 0, None


class _TornPastBound(Exception):
    """A final line without ``\n`` longer than the bytes a head read looks back."""


def append_lines(path: Path, objs: Iterable[Any], *, fsync: bool = False,
                 folder: Folder | None = None) -> int:
    """Append JSON objects as lines; return the offset where they start.

    Under the lock, a torn tail left by a crashed writer is truncated first, so
    the new lines never glue onto half a line; one longer than ``HEAD_BYTES`` is no write
    of ours and refuses the append (``NoLastObject``, naming ``fsck --repair``).
    ``folder``: the folder holding ``path``, open (the caller's): the file and its lock
    opened by their names there, not by path.
    """
    data = b"".join(dumps(o) + b"\n" for o in objs)
    if folder is None:
        make_dir(path.parent)
    with file_lock(path, folder=folder):
        fd, size = open_append_sized(path, create=FILE_MODE, in_folder=folder)
        try:
            try:
                # looked for within ``HEAD_BYTES``, as a session's (redteam45): a planted
                # sparse 2 GiB with no newline at oplog.jsonl's or checkpoints.jsonl's end
                # was read whole by the first append, then cut (trust36)
                tail = _tail_read(fd, size, HEAD_BYTES)[0]
            except _TornPastBound:
                raise _no_last_object(str(path)) from None
            if tail < size:
                os.ftruncate(fd, tail)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            if fsync:
                os.fsync(fd)
            return tail
        finally:
            os.close(fd)


# The longest line read back (a session's event, an op-log entry): twice the longest
# transcript line an import takes (``importers/inputs.py``), so every line Turnback writes
# is read. A longer one is planted or damaged: reported and skipped a piece at a time, not
# held (a planted sparse session file's 1 GiB tail was read whole by every count, a
# server's full listing among them: 2.2 GB, 5.7 s; bench/RESULTS.md, branch redteam11).
MAX_LINE = 128 << 20


def read_lines(
    path: Path, *, start: int = 0, first_line: int = 1, problems: list[Problem] | None = None
) -> Iterator[Line]:
    """Yield parsed lines from byte ``start``; bad lines go to ``problems``.

    A final line without a newline is a write in progress or a torn tail: it is
    skipped silently here (an append repairs it). A line longer than ``MAX_LINE`` is a
    bad line.
    """
    try:
        f = os.fdopen(open_regular(path), "rb")  # the generator owns the handle
    except FileNotFoundError:
        return
    with f:
        if os.fstat(f.fileno()).st_size - start > MAX_LINE:
            # a line longer may stand there: read in bounded pieces, holes passed over
            yield from _long_file_lines(f.fileno(), path, start, first_line, problems)
            return
        # no longer line fits: iterated as it is (a call of ``readline`` a line was ~4 %
        # of a count)
        f.seek(start)
        offset = start
        number = first_line - 1
        for raw in f:
            line_offset = offset
            offset += len(raw)
            if not raw.endswith(b"\n"):
                break  # torn or in-progress tail: skipped silently (an append cuts it)
            number += 1
            value = parse_object(raw, path, number, problems)
            if value is not None:
                yield Line(number, line_offset, value, offset)


def _long_file_lines(fd: int, path: Path, start: int, first_line: int,
                     problems: list[Problem] | None) -> Iterator[Line]:
    """``read_lines`` of a file holding more than ``MAX_LINE`` bytes from ``start``: a
    line longer is a problem, its bytes not held (``bounded_lines``)."""
    offset, number = start, first_line - 1
    for raw, end in whole_lines(fd, start, MAX_LINE):
        number += 1
        line_offset, offset = offset, end
        if raw is None:
            if problems is not None:
                problems.append(Problem(str(path), number,
                                        f"longer than {MAX_LINE} bytes: not read"))
            continue
        value = parse_object(raw, path, number, problems)
        if value is not None:
            yield Line(number, line_offset, value, offset)


def parse_object(
    raw: bytes, path: Path, number: int, problems: list[Problem] | None
) -> dict[str, Any] | None:
    """One line of a JSONL file as an object: None for a blank line, and for a bad one,
    which is reported to ``problems`` with its line number."""
    stripped = raw.strip()
    if not stripped:
        return None
    try:
        value = loads(stripped)
    except orjson.JSONDecodeError as exc:
        if problems is not None:
            problems.append(Problem(str(path), number, f"not valid JSON ({exc})"))
        return None
    if not isinstance(value, dict):
        if problems is not None:
            problems.append(Problem(str(path), number, "line is not a JSON object"))
        return None
    return value


# Complete lines looked at back from a file's end for its last object. Turnback writes only
# objects, so a file of its own ends with one; a longer run of other lines after it is planted
# or damaged. Unbounded, every append to a session ending in 4 MB of two-byte lines parsed
# them all, 6-7 s of CPU under the session's lock (16 MB: 31 s; branch junk33).
HEAD_REACH = 1024
# ... and bytes: the longest line read back (``MAX_LINE``) and 1 MiB after it. Lines alone
# bound nothing of their length: 1,024 junk lines of 1 MB each were read and parsed, about
# 1 GB, by every append (branch junk35). A last record as long as any read is still found.
HEAD_BYTES = MAX_LINE + (1 << 20)


class NoLastObject(StoreDamaged):
    """None of a file's last ``HEAD_REACH`` complete lines (within its last ``HEAD_BYTES``)
    is a record: what it ends with is not looked for further back, and nothing is written
    after it."""


def _no_last_object(shown: str) -> NoLastObject:
    return NoLastObject(
        f"{shown}: none of its last {HEAD_REACH} lines (or last {HEAD_BYTES} bytes) is one "
        "of its records (Turnback writes only records there: those lines were planted, or "
        "the file is damaged), so its last record is not looked for further back and "
        "nothing was written to it. Run 'turnback fsck --repair', which moves the lines "
        "after the last record into a side file beside it ('<name>.junk-<n>'; their "
        f"first {HEAD_BYTES} bytes, more is no line of Turnback's and is dropped, as its "
        "output says; 'turnback fsck' lists them by number); the records before them "
        "are all read as before")


def last_line(path: Path, accept: Callable[[dict[str, Any]], bool] | None = None
              ) -> dict[str, Any] | None:
    """The last complete, parsable line, read from the file's end (costs a line, not the file).

    Read backwards in reads of at most ``TAIL_MOST``; a line longer than ``MAX_LINE`` is
    passed over, not held, as ``read_lines`` does (a planted 256 MiB line at a session's
    end was read whole, in reads growing by 4x: +768 MiB of memory and 4.7 s for every
    append and head look at it; redteam31). ``NoLastObject`` past ``HEAD_REACH`` lines or
    ``HEAD_BYTES`` bytes. ``accept``: which objects are records (``last_line_of``)."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return None
    try:
        return last_line_of(fd, os.fstat(fd).st_size, shown=str(path), accept=accept)
    finally:
        os.close(fd)


def last_line_of(fd: int, size: int, *, shown: str,
                 accept: Callable[[dict[str, Any]], bool] | None = None
                 ) -> dict[str, Any] | None:
    """``last_line`` of the file open at ``fd`` (readable), ``size`` bytes long: for an
    appender that reads the head and writes on one descriptor (one open, not two).
    ``shown``: the file's name in ``NoLastObject``, raised when none of the last
    ``HEAD_REACH`` complete lines (blank ones too) within the last ``HEAD_BYTES`` bytes is a
    record; None when the file holds fewer lines and none is. ``accept``: whether an object
    is one of the file's records, as its full read takes them (an object it skips, ``{}``,
    is a junk line here too, so both find the same last record); None: every object."""
    return tail_and_last_line(fd, size, shown=shown, accept=accept)[1]


def tail_and_last_line(fd: int, size: int, *, shown: str,
                       accept: Callable[[dict[str, Any]], bool] | None = None
                       ) -> tuple[int, dict[str, Any] | None]:
    """``_torn_tail_start`` and ``last_line_of`` together, for an appender that then
    writes at that tail (``sessions/files.py``): the file's last block read once for both,
    not three times (bench/RESULTS.md, branch ``atonce34``)."""
    try:
        for _ in range(CUT_LOOKS):
            # its torn tail looked for within ``HEAD_BYTES`` too: a planted sparse 2 GiB
            # with no newline at a session's end was read whole by every look at its head,
            # checkpoints.jsonl's by every fresh process's no-op (branch redteam45)
            tail, read = _tail_read(fd, size, HEAD_BYTES)
            try:
                return tail, _last_line_from(fd, tail, read, shown, accept)
            except _CutWhileRead:
                size = os.fstat(fd).st_size  # looked at again from where it ends now
        return _tail_read(fd, size, HEAD_BYTES)[0], None
    except _TornPastBound:
        raise _no_last_object(shown) from None


# a file cut shorter while its end is read is looked at again from its new end, this many
# times at most (another hand cutting it each time: no last line, as an empty file)
CUT_LOOKS = 3


class _CutWhileRead(Exception):
    """A read back from the end came short: the file was cut meanwhile, and pieces read
    before and after the cut would be glued into a line never written."""


def _last_line_from(fd: int, pos: int, read: bytes | None, shown: str,
                    accept: Callable[[dict[str, Any]], bool] | None
                    ) -> dict[str, Any] | None:
    """``last_line_of`` from the clean end ``pos``; ``read``: the file's last
    ``TAIL_FIRST`` bytes (or all of it when shorter) when already read, else None."""
    limit = max(0, pos - HEAD_BYTES)  # no byte before it is read
    looked = 0  # complete lines looked at, back from the end
    last_read = True  # the file's last read: it ends at a newline, nothing after it a line
    block = TAIL_FIRST  # a line or a few; more only for a longer last line
    carried: list[bytes] | None = None  # a line begun before the last read, end first
    held = 0  # its bytes so far: past MAX_LINE, its pieces are let go
    while pos > 0:
        if pos <= limit:  # the line ending here begins before the bound: not looked at
            raise _no_last_object(shown)
        start = max(limit, pos - block)
        if read is not None and len(read) == pos - start:  # the tail's look read this block
            parts, read = read.split(b"\n"), None
        else:
            chunk = os.pread(fd, pos - start, start)
            if len(chunk) != pos - start:
                raise _CutWhileRead
            parts = chunk.split(b"\n")
        if last_read:
            last_read = False
            if len(parts) > 1 and not parts[-1]:  # not when the file was cut meanwhile
                parts.pop()
        pos, block = start, min(block * 4, TAIL_MOST)
        if carried is not None:  # this read's last part is the carried line's front
            held += len(parts[-1])
            if held <= MAX_LINE:
                carried.append(parts[-1])
            else:
                carried.clear()
            if len(parts) == 1 and start > 0:
                continue  # no line end in this read: it goes on before it
            parts[-1] = b"".join(reversed(carried)) if held <= MAX_LINE else b""
            carried, held = None, 0
        if start > 0:  # the first part may begin before this read
            first = parts.pop(0)
            carried, held = [first], len(first)
        for raw in reversed(parts):
            looked += 1
            if looked > HEAD_REACH:
                raise _no_last_object(shown)
            raw = raw.strip()
            if not raw.startswith(b"{"):
                continue  # blank, or no object: not parsed (a 1 MB array was, whole)
            try:
                value = loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict) and (accept is None or accept(value)):
                return value
    return None
