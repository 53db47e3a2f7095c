"""What every importer shares: neutral records, streamed lines, stable ids.

An importer never touches the store. It turns the lines (or the document) of
one source file into *records* — a session header, events, header updates,
checkpoints and problems — and ``apply.py`` writes them. Keeping parsing pure
lets the parsers be tested without a store and fuzzed cheaply.

Ids are derived from the input (the source's own ids where it has them,
otherwise a hash of the line or of its position), so importing the same file
twice yields the same ids and the store skips what it already has.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ..errors import InvalidInput, Unsafe
from ..events import JSON, UTC, Event, SessionHeader
from ..fs.paths import expand_home
from ..models import Problem
from .inputs import DEFAULT_MAX_LINE, MAX_LINE_ENV, max_line, open_regular, read_regular, size_text

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")

# Title candidates rank: a later candidate replaces the title only when its
# rank is at least the current one (a generated summary beats the first prompt).
TITLE_FIRST_PROMPT = 1
TITLE_LAST_PROMPT = 2
TITLE_SUMMARY = 3


@dataclass(slots=True)
class SessionRecord:
    """A session to create if the store does not have it yet."""

    header: SessionHeader


@dataclass(slots=True)
class MetaRecord:
    """Header fields learnt while reading (title, model, …), applied once at the end."""

    session_id: str
    fields: dict[str, str]
    title_rank: int = 0


@dataclass(slots=True)
class EventRecord:
    event: Event


@dataclass(slots=True)
class CheckpointRecord:
    """A partial checkpoint of the files an agent backed up, tied to one event."""

    session_id: str
    event_id: str | None
    checkpoint_id: str
    label: str
    ts: str | None
    files: dict[str, bytes | None]
    file: str = ""  # where it came from, for problems
    line: int = 0


Record = SessionRecord | MetaRecord | EventRecord | CheckpointRecord | Problem


@dataclass(slots=True)
class Context:
    """What a parser may know about where it runs (never the store itself)."""

    workspace: Path
    home: Path
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # Links and odd files that locating inputs passed over; the runner reports them.
    refused: list[Problem] = field(default_factory=list)

    @property
    def max_line(self) -> int:
        """The most bytes read at once for one line, document or backup."""
        return max_line(self.env)

    @property
    def claude_dir(self) -> Path:
        override = self.env.get("CLAUDE_CONFIG_DIR")
        return expand_home(override) if override else self.home / ".claude"

    @property
    def codex_dir(self) -> Path:
        override = self.env.get("CODEX_HOME")
        return expand_home(override) if override else self.home / ".codex"


@dataclass(slots=True)
class RawLine:
    """One complete line of an input file."""

    number: int  # 1-based
    offset: int  # byte offset of the line start
    end: int  # byte offset just past the line (and its newline)
    data: bytes


@dataclass(slots=True)
class SkippedLine:
    """A line longer than the bound: passed over unread, reported, never held in memory."""

    number: int
    end: int  # byte offset just past the line's newline
    problem: Problem


SKIP_CHUNK = 1 << 20  # how much of an over-long line is read at a time to find its end


def iter_raw_lines(
    path: Path, start: int = 0, first_line: int = 1, *, final: bool = True,
    limit: int = DEFAULT_MAX_LINE,
) -> Iterator[RawLine | SkippedLine | Problem]:
    """Stream the lines of ``path`` from byte ``start`` (memory: one line at a time).

    A last line without a newline is either still being written (``final`` is
    False: it is left for a later read) or cut off (``final``: it is yielded if
    it is a whole JSON value, else reported as a problem). A line over ``limit``
    bytes is skipped and reported, like a line that is not JSON. ``path`` must be
    a regular file reached without a link (:func:`inputs.open_regular`).
    """
    with open_regular(path) as f:
        f.seek(start)
        offset = start
        number = first_line - 1
        while True:
            raw, ended = _read_line(f, limit)
            if raw is not None and not raw:
                return
            number += 1
            line_offset = offset
            if raw is None:
                ended = ended or _skip_rest(f)
                offset = f.tell()
                if not ended and not final:
                    return  # still being written: look again when it grows
                what = f"line is longer than {size_text(limit)} (the bound {MAX_LINE_ENV})"
                if not ended:
                    yield Problem(str(path), number, f"{what} and the file ends mid-line; "
                                  "skipped (the rest of the file was imported)")
                    return
                yield SkippedLine(number, offset, Problem(
                    str(path), number,
                    f"{what}; skipped (the lines after it were imported; "
                    f"raise {MAX_LINE_ENV}, e.g. {MAX_LINE_ENV}=256M, to read it)"))
                continue
            offset += len(raw)
            if raw.endswith(b"\n"):
                yield RawLine(number, line_offset, offset, raw)
                continue
            if not final:
                return
            if _is_whole_json(raw):
                yield RawLine(number, line_offset, offset, raw)
            else:
                yield Problem(
                    str(path),
                    number,
                    f"line is cut off after {len(raw)} bytes (the file ends mid-line); "
                    "the rest of the file was imported",
                )


def _read_line(f: BinaryIO, limit: int) -> tuple[bytes | None, bool]:
    """(the next line, b"" at the end; or None if it is longer than ``limit``, its end read).

    Read a chunk at a time so that an over-long line is never held whole: memory
    stays within ``limit`` plus one chunk (a line within it is joined once). The
    flag says whether that over-long line's newline was read already.
    """
    first = f.readline(SKIP_CHUNK)
    ended = first.endswith(b"\n")
    if len(first) < SKIP_CHUNK or ended:
        return (first, ended) if len(first) <= limit else (None, ended)
    chunks = [first]
    size = len(first)
    while size <= limit and not ended:
        chunk = f.readline(SKIP_CHUNK)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        ended = chunk.endswith(b"\n")
    if size > limit:
        return None, ended
    return b"".join(chunks), ended


def _skip_rest(f: BinaryIO) -> bool:
    """Read past the rest of an over-long line; whether a newline ended it."""
    while True:
        chunk = f.readline(SKIP_CHUNK)
        if not chunk:
            return False
        if chunk.endswith(b"\n"):
            return True


def _error_line(exc: orjson.JSONDecodeError) -> int:
    return int(getattr(exc, "lineno", 0) or 0)


def _is_whole_json(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def parse_json_line(path: Path, line: RawLine) -> JSON | Problem | None:
    """A line's JSON object, ``None`` for a blank line, or a problem naming file:line."""
    stripped = line.data.strip()
    if not stripped:
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        return Problem(str(path), line.number, f"not valid JSON ({exc}); line skipped")
    if not isinstance(value, dict):
        return Problem(
            str(path), line.number, f"expected a JSON object, found {type(value).__name__}"
        )
    return value


def derive_id(*parts: object) -> str:
    """A stable 16-hex-digit id from the parts (same input, same id)."""
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def safe_id(value: object, *salt: object) -> str | None:
    """``value`` if it is usable as a Turnback id, a stable stand-in if not, None if absent."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and _ID_RE.match(value):
        return value
    return "x" + derive_id(value, *salt)[1:]


def sub_id(base: str, suffix: object) -> str:
    """The id of an event derived from another (``<base>:<suffix>``), kept within id rules."""
    candidate = f"{base}:{suffix}"
    return candidate if _ID_RE.match(candidate) else "x" + derive_id(base, suffix)[1:]


def is_valid_id(value: str) -> bool:
    return bool(_ID_RE.match(value))


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int:
    """An int from a count field; anything else (bool, text, null) counts as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 2**63:
        return int(value)
    return 0


def as_dict(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def short_title(text: str, width: int = 80) -> str:
    """A one-line title from the start of a prompt."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def workspace_relpath(path: str, cwd: str | None, workspace: Path) -> str | None:
    """``path`` (absolute, or relative to the agent's ``cwd``) relative to the workspace.

    None when it lies outside the workspace. A relative path whose session cwd is
    unknown or elsewhere is taken as workspace-relative: the session is being
    imported into this workspace on purpose.
    """
    ws = os.path.normpath(str(workspace))
    if os.path.isabs(path):
        full = os.path.normpath(path)
    elif cwd and os.path.isabs(cwd) and _is_within(os.path.normpath(cwd), ws):
        full = os.path.normpath(os.path.join(cwd, path))
    else:
        full = os.path.normpath(os.path.join(ws, path))
    if not _is_within(full, ws) or full == ws:
        return None
    return os.path.relpath(full, ws).replace(os.sep, "/")


def _is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class FileParser:
    """Turns the lines of one file into records.

    State lives on the instance between calls, so a follower can feed lines
    appended later and get the same records a whole import would give.
    """

    def __init__(self, path: Path, ctx: Context) -> None:
        self.path = path
        self.ctx = ctx

    def feed(self, line: RawLine) -> Iterator[Record]:
        raise NotImplementedError

    def finish(self, final: bool) -> Iterator[Record]:
        """Flush what waits for more input; ``final`` means no more lines will come."""
        return iter(())

    def problem(self, line: int, message: str) -> Problem:
        return Problem(str(self.path), line, message)


class JsonlParser(FileParser):
    """A parser of JSON Lines: bad lines become problems, the rest goes to ``on_object``."""

    def feed(self, line: RawLine) -> Iterator[Record]:
        obj = parse_json_line(self.path, line)
        if obj is None:
            return
        if isinstance(obj, Problem):
            yield obj
            return
        yield from self.interpreted(line.number, self.on_object(obj, line))

    def interpreted(self, number: int, records: Iterator[Record]) -> list[Record]:
        """``records``, the mapping of line ``number``, made whole (an error mid-line
        yields nothing half-done), or the one problem saying that line could not be
        interpreted: a line of a shape the mapping never met is that line's loss only."""
        try:
            return list(records)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return [self.problem(number, f"could not interpret this line ({exc!r}); skipped")]

    def on_object(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        raise NotImplementedError


def unreadable(path: Path, exc: InvalidInput | Unsafe | OSError, what: str = "file") -> Problem:
    """The problem of an input that could not be read, the ``what`` it is skipped: refused
    as input (too large, not a regular file: its message) or the system's error."""
    if isinstance(exc, OSError):
        return Problem(str(path), 0, f"cannot read ({exc.strerror or exc}); {what} skipped")
    return Problem(str(path), 0, f"{exc.message}; {what} skipped")


class DocumentParser:
    """A parser of whole JSON documents (formats that rewrite files rather than append).

    ``path`` is what ``locate`` returned: a file, or a folder the format treats
    as one unit (seed 001 keeps a session as a folder of checkpoint files).
    """

    def __init__(self, path: Path, ctx: Context) -> None:
        self.path = path
        self.ctx = ctx

    def parse(self) -> Iterator[Record]:
        """The records of the one JSON object file ``path`` (``on_document``), or the
        problem that says why it is not one. Formats of several files override this."""
        doc = self.load(self.path)
        if isinstance(doc, Problem):
            yield doc
            return
        yield from self.on_document(doc)

    def on_document(self, doc: JSON) -> Iterator[Record]:
        raise NotImplementedError

    def load(self, path: Path) -> JSON | Problem:
        """A JSON object file, or a problem naming it."""
        try:
            value = orjson.loads(read_regular(path, self.ctx.max_line))
        except orjson.JSONDecodeError as exc:
            return Problem(str(path), _error_line(exc), f"not valid JSON ({exc}); file skipped")
        except (InvalidInput, Unsafe, OSError) as exc:
            return unreadable(path, exc)
        if not isinstance(value, dict):
            return Problem(str(path), 1, f"expected a JSON object, found {type(value).__name__}")
        return value

    def problem(self, message: str, line: int = 0) -> Problem:
        return Problem(str(self.path), line, message)


_TS_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?$"
)


def norm_ts(value: Any) -> str | None:
    """An ISO 8601 time as Turnback writes it (UTC, milliseconds, ``Z``), or None.

    Sources write nanoseconds or offsets; one shape keeps times comparable as text.
    """
    if not isinstance(value, str):
        return None
    m = _TS_RE.match(value.strip())
    if not m:
        return None
    day, clock, frac, zone = m.groups()
    frac = (frac or "")[:6].ljust(6, "0")
    zone = "+00:00" if zone in (None, "Z") else zone
    if len(zone) == 5:
        zone = zone[:3] + ":" + zone[3:]
    try:
        dt = datetime.fromisoformat(f"{day}T{clock}.{frac}{zone}")
    except ValueError:
        return None
    return iso_from_epoch(dt.timestamp())


def iso_from_epoch(seconds: float) -> str:
    """UTC ISO 8601 with milliseconds for seconds since the epoch."""
    try:
        dt = datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
