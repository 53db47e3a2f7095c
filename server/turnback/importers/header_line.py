"""JSON Lines whose session starts at a header line that may come after other lines.

Claude Code and Codex name the session (its id, time, folder) on a line that is
usually, but not always, the first. The lines before it are held, at most
``max_held`` of them and ``MAX_HELD_BYTES`` of their bytes (a file that never names
its session is still imported, under a session named after the file), and are
replayed in order once the session has started, so a follower fed the lines one
at a time gets the same records as a whole import.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..events import JSON
from .base import Context, JsonlParser, RawLine, Record

# the held lines' bytes: each line may be up to ``TURNBACK_MAX_LINE`` (64 MiB), so a
# count alone let a planted file hold 200 of them (12.5 GiB) in memory (redteam50)
MAX_HELD_BYTES = 64 << 20


class HeaderLineParser(JsonlParser):
    """``is_header`` picks the line that starts the session, ``start`` starts it (setting
    ``session_id``), ``on_line`` maps every line once it has started, the held ones first."""

    max_held = 50

    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.session_id: str | None = None
        self.held: list[tuple[JSON, RawLine]] = []
        self.held_bytes = 0

    def is_header(self, obj: JSON) -> bool:
        raise NotImplementedError

    def start(self, header: JSON | None) -> Iterator[Record]:
        """The session's records from its header line (None: it has none); may read ``held``."""
        raise NotImplementedError

    def on_line(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        raise NotImplementedError

    def on_object(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        if self.session_id is not None:
            yield from self.on_line(obj, line)
            return
        self.held.append((obj, line))
        self.held_bytes += len(line.data)
        header = self.is_header(obj)
        if header or len(self.held) >= self.max_held or self.held_bytes >= MAX_HELD_BYTES:
            yield from self._begin(obj if header else None)

    def finish(self, final: bool) -> Iterator[Record]:
        if final and self.session_id is None and self.held:
            yield from self._begin(None)

    def _begin(self, header: JSON | None) -> Iterator[Record]:
        yield from self.start(header)
        held, self.held, self.held_bytes = self.held, [], 0
        for obj, line in held:
            # each held line on its own: one that cannot be mapped is a problem naming it,
            # not the loss of the session's record and of every line held with it
            yield from self.interpreted(line.number, self.on_line(obj, line))
