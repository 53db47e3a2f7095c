"""Blame one file: walk its versions along the folder's history, carrying each line's origin.

Only checkpoints where the file changed cost anything (its blob hash is compared first).
The walk keeps the origins at the checkpoints a later rewind goes back to, so a rewound
file starts from them; everything else is let go as the walk moves on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import InvalidInput, NotFound
from ..events import JSON
from ..store.facade import Store
from .history import History
from .linediff import carry, split_lines
from .origins import UNCOMMITTED, Origin


@dataclass(slots=True)
class FileState:
    """A file at one point of the walk: its blob hash (None: absent), lines and origins."""

    position: int  # index in the history's checkpoints; -1 before the first
    blob: str | None
    lines: list[bytes] = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    binary: bool = False


@dataclass(slots=True)
class Blame:
    path: str
    checkpoint: str | None  # None: the workspace as it is now
    lines: list[bytes]
    origins: list[Origin]

    def ranges(self) -> Iterator[tuple[int, int, Origin]]:
        """(first line, last line, origin), 1-based, for each run of one origin."""
        start = 0
        for k in range(1, len(self.origins) + 1):
            if k == len(self.origins) or self.origins[k] != self.origins[start]:
                yield start + 1, k, self.origins[start]
                start = k

    def to_json(self) -> JSON:
        return {"path": self.path, "checkpoint": self.checkpoint,
                "lines": [{"line": n + 1, "origin": o.to_json()}
                          for n, o in enumerate(self.origins)]}

    def ranges_json(self) -> JSON:
        return {"path": self.path, "checkpoint": self.checkpoint, "lineCount": len(self.lines),
                "ranges": [{"start": a, "end": b, "origin": o.to_json()}
                           for a, b, o in self.ranges()]}


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


class Walker:
    """One file's walk; ``advance`` continues it over checkpoints added since."""

    def __init__(self, store: Store, path: str) -> None:
        self.store = store
        self.path = path
        self.state = FileState(-1, None)
        self.kept: dict[int, FileState] = {}  # states at positions a rewind goes back to
        self.versions: list[tuple[int, str | None]] = []  # (position, blob) where it changed

    def advance(self, history: History, states: list[tuple[int, str | None]],
                stop: int | None = None) -> FileState:
        """Walk ``states`` ((position, blob), by position) past the current state, up to
        position ``stop`` inclusive."""
        targets = {history.position[r.target] for rws in history.rewinds.values()
                   for r in rws if r.target in history.position}
        for pos, blob in states:
            if pos <= self.state.position:
                continue
            if stop is not None and pos > stop:
                break
            base = self.state
            rb = history.rewind_base(pos, self.path)
            if rb is not None:
                base = self._state_at(history, history.position[rb])
            if blob != base.blob:
                self.state = self._step(base, blob, pos, history.authors[pos])
                self.versions.append((pos, blob))
            else:
                self.state = FileState(pos, base.blob, base.lines, base.origins, base.binary)
            if pos in targets:
                self.kept[pos] = self.state
        return self.state

    def _state_at(self, history: History, pos: int) -> FileState:
        kept = self.kept.get(pos)
        if kept is not None:
            return kept
        # not kept (an older target): walk again from the start, keeping it this time
        again = Walker(self.store, self.path)
        states = [s for s in _positions(self.store, history, self.path) if s[0] <= pos]
        found = again.advance(history, states, stop=pos)
        return found if found.position == pos else FileState(pos, None)

    def _step(self, base: FileState, blob: str | None, pos: int, author: Origin) -> FileState:
        if blob is None:
            return FileState(pos, None)
        data = self.store.read_blob(blob)
        if is_binary(data):
            return FileState(pos, blob, [], [], True)
        lines = split_lines(data)
        origins = carry(base.lines, base.origins, lines, author)
        return FileState(pos, blob, lines, origins)


def _positions(store: Store, history: History, path: str) -> list[tuple[int, str | None]]:
    out = []
    for cp, blob in store.file_states(path):
        pos = history.position.get(cp.id)
        if pos is not None:
            out.append((pos, blob))
    return out


def blame_file(store: Store, history: History, path: str, at: str | None = None,
               walker: Walker | None = None) -> Blame:
    """``path``'s lines with their origins at checkpoint ``at`` (None: as it is now, lines
    not yet in a checkpoint marked ``uncommitted``)."""
    walker = walker or Walker(store, path)
    stop = None
    if at is not None:
        cp = store.resolve_checkpoint(at)
        if cp.id not in history.position:
            raise NotFound(f"checkpoint {cp.id} is not in the folder's history")
        stop = history.position[cp.id]
    state = walker.advance(history, _positions(store, history, path), stop)
    if at is not None:
        assert stop is not None
        if state.blob is None:
            raise NotFound(f"{path} is not in checkpoint {at}")
        return _finish(path, store.resolve_checkpoint(at).id, state)
    return _working(store, history, path, state)


def _working(store: Store, history: History, path: str, state: FileState) -> Blame:
    data = store.working_file(path)
    if data is None:
        raise NotFound(f"{path} is not in the workspace (to blame an older version, "
                       "name a checkpoint that holds it: --at CHECKPOINT)")
    if is_binary(data):
        raise InvalidInput(f"{path} is a binary file: it has no lines to attribute")
    last = len(history.checkpoints) - 1
    base = state
    if last >= 0:
        # a rewind since the last checkpoint made the file what its target held
        for rw in history.rewinds.get(history.checkpoints[last].id, ()):
            if rw.covers(path) and rw.target in history.position:
                w = Walker(store, path)
                base = w.advance(history, _positions(store, history, path),
                                 history.position[rw.target])
    lines = split_lines(data)
    until = history.checkpoints[last] if last >= 0 else None
    fresh = Origin(UNCOMMITTED, None, until.id if until else None, (),
                   until.ts if until else None, None)
    origins = carry(base.lines, base.origins, lines, fresh)
    return Blame(path, None, lines, origins)


def _finish(path: str, checkpoint: str, state: FileState) -> Blame:
    if state.binary:
        raise InvalidInput(f"{path} is a binary file: it has no lines to attribute")
    return Blame(path, checkpoint, state.lines, state.origins)
