"""The operation log (``oplog.jsonl``): every rewind and undo, so each can be undone.

Like jj's operation log: an undo is itself an operation, so undoing an undo
redoes. A rewind in progress is described by ``journal.json`` until it is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from ..errors import StoreDamaged
from ..fs.atomic import atomic_write
from ..fs.jsonl import append_lines, dumps, last_line, loads, read_lines
from ..fs.reading import read_regular
from . import signing

# a journal names each path a rewind changes (about 200 bytes a path): far more than
# MAX_FILES paths' worth is no journal Turnback wrote
MAX_JOURNAL = 1 << 30


class OpLog:
    def __init__(self, root: Path) -> None:
        self.path = root / "oplog.jsonl"
        self.journal = root / "journal.json"

    def last(self) -> dict[str, Any] | None:
        return last_line(self.path)

    def all(self) -> list[dict[str, Any]]:
        return [line.value for line in read_lines(self.path)]

    def add(self, op: dict[str, Any], *, fsync: bool) -> None:
        append_lines(self.path, [op], fsync=fsync)

    # -- journal of the rewind in progress ------------------------------------------
    def begin(self, record: dict[str, Any], *, fsync: bool, sync_with: Sequence[Path] = ()
              ) -> None:
        """Write the journal of a rewind about to start, signed (``signing``).
        ``sync_with``: files made durable together with it, before it appears (the
        safety checkpoint's record, appended unsynced just before)."""
        atomic_write(self.journal, dumps(signing.sign(record)), fsync=fsync,
                     sync_with=sync_with)

    def pending(self) -> dict[str, Any] | None:
        try:
            data = loads(read_regular(self.journal, limit=MAX_JOURNAL))
        except FileNotFoundError:
            return None
        except orjson.JSONDecodeError as exc:
            raise StoreDamaged(
                f"{self.journal} (an interrupted rewind) is unreadable ({exc}); the workspace may "
                "be half rewound: inspect it, then delete that file"
            ) from exc
        if not isinstance(data, dict):
            raise StoreDamaged(f"{self.journal} must hold a JSON object")
        return data

    def end(self) -> None:
        try:
            self.journal.unlink()
        except FileNotFoundError:
            pass
