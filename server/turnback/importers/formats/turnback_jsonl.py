"""Turnback's own JSONL (what ``turnback export SESSION`` writes).

The shape is the store's session file: a header line ``{"type": "session",
…header}`` then one line per event ``{id, session, parent, ts, kind, data}``.
``{"type": "meta"}`` lines (title changes, end of session) are folded into
the header; other control lines are skipped. Several sessions may follow one
another in a file. Events keep their ids, parents, times and data, so an
exported session imports back identical — into this store or another.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...errors import InvalidInput
from ...events import JSON, Event, SessionHeader
from ..base import (
    Context,
    EventRecord,
    JsonlParser,
    MetaRecord,
    RawLine,
    Record,
    SessionRecord,
    is_valid_id,
)
from ..given_path import file_or_folder, required

HEADER_FIELDS = ("title", "agent", "model", "cwd", "ended")
# An explicit header title is the session's own: it beats any guessed title.
TITLE_RANK = 100


def locate(ctx: Context, path: Path | None) -> list[Path]:
    path = required("turnback", path, "an exported .jsonl file or folder")
    return file_or_folder(ctx, path, "*.jsonl")


class TurnbackParser(JsonlParser):
    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.header: SessionHeader | None = None

    def on_object(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        typ = obj.get("type")
        if typ == "session":
            try:
                header = SessionHeader.from_json(obj)
            except InvalidInput as exc:
                yield self.problem(line.number, f"bad session header: {exc.message}")
                self.header = None
                return
            if not is_valid_id(header.id):
                yield self.problem(line.number, f"session id {header.id!r} is not a valid id")
                self.header = None
                return
            self.header = header
            yield SessionRecord(header)
            yield self._meta(obj)
            return
        if self.header is None:
            yield self.problem(line.number, "line before any session header line; skipped")
            return
        if typ == "meta":
            yield self._meta(obj)
            return
        if typ is not None:
            return  # head moves and other control lines belong to the store that wrote them
        try:
            event = Event.from_json(obj)
        except InvalidInput as exc:
            yield self.problem(line.number, exc.message)
            return
        bad_parent = event.parent is not None and not is_valid_id(event.parent)
        if not is_valid_id(event.id) or bad_parent:
            yield self.problem(line.number, f"event id {event.id!r} or its parent is not valid")
            return
        event.session = self.header.id
        yield EventRecord(event)

    def _meta(self, obj: JSON) -> MetaRecord:
        assert self.header is not None
        fields = {k: obj[k] for k in HEADER_FIELDS if isinstance(obj.get(k), str)}
        if isinstance(obj.get("head"), str) and is_valid_id(obj["head"]):
            fields["head"] = obj["head"]  # the exported head (it may sit on a fork)
        return MetaRecord(self.header.id, fields, TITLE_RANK)
