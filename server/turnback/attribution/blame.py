"""Blame one file: walk its versions along the folder's history, carrying each line's origin.

Only checkpoints where the file changed cost anything (its blob hash is compared first).
The walk keeps the origins at the checkpoints a later rewind goes back to, so a rewound
file starts from them; everything else is let go as the walk moves on. A walk can be
continued (``Walker.advance``) over checkpoints added since: what the server's cache does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import InvalidInput, NotFound
from ..events import JSON
from ..objects.objectstore import BLOB, hash_bytes
from ..store.facade import Store
from .history import History
from .linediff import carry, carry_text, split_lines
from .origins import SHARED, TURN, UNCOMMITTED, Origin


@dataclass(slots=True)
class FileState:
    """A file at one point of the walk: its blob hash (None: absent), lines and origins."""

    position: int  # index in the history's checkpoints; -1 before the first
    blob: str | None
    lines: list[bytes] = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    binary: bool = False
    data: bytes | None = None  # the file's bytes (the next version's diff starts from them)
    agents: int | None = None  # lines whose origin is an agent's (None: not counted)


@dataclass(slots=True)
class Blame:
    path: str
    checkpoint: str | None  # None: the workspace (or the editor's text) as it is now
    lines: list[bytes]
    origins: list[Origin]
    agents: int | None = None  # lines whose origin is an agent's, when the walk counted them

    def ranges(self) -> Iterator[tuple[int, int, Origin]]:
        """(first line, last line, origin), 1-based, for each run of one origin."""
        start = 0
        for k in range(1, len(self.origins) + 1):
            if k == len(self.origins) or (self.origins[k] is not self.origins[start]
                                          and self.origins[k] != self.origins[start]):
                yield start + 1, k, self.origins[start]
                start = k

    def to_json(self) -> JSON:
        made: dict[int, JSON] = {}  # one dict per origin, shared by its lines
        lines = []
        for n, o in enumerate(self.origins):
            d = made.get(id(o))
            if d is None:
                d = made[id(o)] = o.to_json()
            lines.append({"line": n + 1, "origin": d})
        return {"path": self.path, "checkpoint": self.checkpoint, "lines": lines}

    def ranges_json(self, first: int = 1, last: int | None = None,
                    made: dict[int, tuple[Origin, JSON]] | None = None) -> JSON:
        """The runs of lines ``first``..``last`` (1-based, inclusive; default: all), each
        naming its origin by index in ``origins``, which holds each origin once: a file
        of 5,000 lines and 1,000 steps would otherwise repeat hundreds of them. ``made``:
        origins' JSON made for earlier answers, by the origin's id (the origin kept with
        it, so the id stays its own), taken and added to (uncommitted lines' are not)."""
        origins = self.origins
        last = len(origins) if last is None else min(last, len(origins))
        table: dict[int, int] = {}
        table_json: list[JSON] = []
        ranges: list[JSON] = []
        k = max(first, 1) - 1
        while k < last:  # the runs that overlap first..last, found from there, not from 1
            o = origins[k]
            end = k + 1
            while end < last and (origins[end] is o or origins[end] == o):
                end += 1
            n = table.get(id(o))
            if n is None:
                n = table[id(o)] = len(table_json)
                hit = made.get(id(o)) if made is not None else None
                if hit is None:
                    hit = (o, o.to_json())
                    if made is not None and o.kind != UNCOMMITTED:
                        made[id(o)] = hit
                table_json.append(hit[1])
            ranges.append({"start": k + 1, "end": end, "origin": n})
            k = end
        agents = self.agents if self.agents is not None else agent_lines(origins)
        return {"path": self.path, "checkpoint": self.checkpoint, "lineCount": len(self.lines),
                "agentLines": agents, "origins": table_json, "ranges": ranges}


AGENT_KINDS = frozenset({TURN, SHARED})


def agent_lines(origins: Sequence[Origin]) -> int:
    return sum(1 for o in origins if o.kind in AGENT_KINDS)


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


class Walker:
    """One file's walk over one history; ``advance`` continues it."""

    def __init__(self, store: Store, path: str) -> None:
        self.store = store
        self.path = path
        self.state = FileState(-1, None)
        self.kept: dict[int, FileState] = {}  # states at positions a rewind goes back to

    def advance(self, history: History, stop: int | None = None,
                have: tuple[str, bytes] | None = None) -> FileState:
        """Walk the history's checkpoints after the current state, up to ``stop``.
        ``have``: a blob's hash and bytes already at hand (the file on disk, right after a
        turn the version its last checkpoint holds), not read from the store again."""
        end = len(history.checkpoints) if stop is None else stop + 1
        todo = history.checkpoints[self.state.position + 1 : end]
        if not todo:
            return self.state
        targets = {history.position[r.target] for rws in history.rewinds.values()
                   for r in rws if r.target in history.position}
        for cp, blob in self.store.file_states(self.path, todo):
            pos = history.position[cp.id]
            base = self.state
            rb = history.rewind_base(pos, self.path)
            if rb is not None:
                base = self._state_at(history, history.position[rb])
            if blob != base.blob:
                self.state = self._step(base, blob, pos, history.authors[pos], have)
            else:
                self.state = FileState(pos, base.blob, base.lines, base.origins, base.binary,
                                       base.data, base.agents)
            if pos in targets:
                self.kept[pos] = self.state
        if self.state.position < end - 1:  # checkpoints that said nothing of the file
            s = self.state
            self.state = FileState(end - 1, s.blob, s.lines, s.origins, s.binary, s.data,
                                   s.agents)
        return self.state

    def _state_at(self, history: History, pos: int) -> FileState:
        kept = self.kept.get(pos)
        if kept is not None:
            return kept
        # not kept (the history changed under a continued walk): walk again up to it
        return Walker(self.store, self.path).advance(history, pos)

    def _step(self, base: FileState, blob: str | None, pos: int, author: Origin,
              have: tuple[str, bytes] | None = None) -> FileState:
        if blob is None:
            return FileState(pos, None)
        data = have[1] if have is not None and have[0] == blob else self.store.read_blob(blob)
        if is_binary(data):
            return FileState(pos, blob, [], [], True)
        lines, origins, agents = _carry(base, data, author)
        return FileState(pos, blob, lines, origins, data=data, agents=agents)


def blame_at(store: Store, history: History, path: str, at: str,
             walker: Walker | None = None) -> Blame:
    """``path``'s lines with their origins at checkpoint ``at``."""
    cp = store.resolve_checkpoint(at)
    if cp.id not in history.position:
        raise NotFound(f"checkpoint {cp.id} is not in the folder's history")
    stop = history.position[cp.id]
    if walker is None or walker.state.position > stop:
        walker = Walker(store, path)
    state = walker.advance(history, stop)
    if state.blob is None:
        raise NotFound(f"{path} is not in checkpoint {cp.id}")
    if state.binary:
        raise InvalidInput(f"{path} is a binary file: it has no lines to attribute")
    return Blame(path, cp.id, state.lines, state.origins, state.agents)


def blame_now(store: Store, history: History, path: str, walker: Walker | None = None,
              text: bytes | None = None) -> Blame:
    """``path`` as it is in the workspace now (or ``text``, an editor's unsaved version):
    lines not yet in a checkpoint are ``uncommitted``."""
    data = text if text is not None else store.working_file(path)
    if data is None:
        raise NotFound(f"{path} is not in the workspace (to blame an older version, "
                       "name a checkpoint that holds it: --at CHECKPOINT)")
    return blame_text(store, history, path, data, None, walker)


def blame_text(store: Store, history: History, path: str, data: bytes, stop: int | None,
               walker: Walker | None = None) -> Blame:
    """``data`` as a later version of ``path`` than the history up to position ``stop``
    (None: all of it) holds: its lines that no checkpoint up to there holds are
    ``uncommitted``."""
    if is_binary(data):
        raise InvalidInput(f"{path} is a binary file: it has no lines to attribute")
    if walker is None or (stop is not None and walker.state.position > stop):
        walker = Walker(store, path)
    digest = hash_bytes(BLOB, data)
    state = walker.advance(history, stop, (digest, data))
    end = len(history.checkpoints) - 1 if stop is None else stop
    last = history.checkpoints[end] if end >= 0 else None
    base = state
    if last is not None:
        # a rewind after that checkpoint made the file what its target held
        for rw in history.rewinds.get(last.id, ()):
            if rw.covers(path) and rw.target in history.position:
                base = walker._state_at(history, history.position[rw.target])
    if base.blob is not None and not base.binary and digest == base.blob:
        # as the last checkpoint holds it (the usual case right after a turn): its lines
        return Blame(path, None, base.lines, base.origins, base.agents)
    fresh = Origin(UNCOMMITTED, None, last.id if last else None, (),
                   last.ts if last else None, None)
    lines, origins, agents = _carry(base, data, fresh)
    return Blame(path, None, lines, origins, agents)


def _carry(base: FileState, data: bytes, author: Origin
           ) -> tuple[list[bytes], list[Origin], int]:
    """``data``'s lines and origins as a version after ``base``, and how many are an
    agent's: from the bytes when base has them (only the lines between the common head and
    tail split, diffed and counted again)."""
    if base.data is not None and not base.binary:
        c = carry_text(base.data, base.lines, base.origins, data, author)
        if base.agents is None:
            return c.lines, c.origins, agent_lines(c.origins)
        gone = agent_lines(base.origins[c.head : len(base.origins) - c.tail])
        came = agent_lines(c.origins[c.head : len(c.origins) - c.tail])
        return c.lines, c.origins, base.agents - gone + came
    lines = split_lines(data)
    origins = carry(base.lines, base.origins, lines, author)
    return lines, origins, agent_lines(origins)


def blame_file(store: Store, history: History, path: str, at: str | None = None) -> Blame:
    """``path`` at checkpoint ``at``, or as it is now (None)."""
    if at is not None:
        return blame_at(store, history, path, at)
    return blame_now(store, history, path)
