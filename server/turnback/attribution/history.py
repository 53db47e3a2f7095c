"""The folder's history as attribution walks it: every checkpoint of every session, by time,
and who made each step from one checkpoint to the next.

A step belongs to a turn when the turn's start checkpoint is at or before the step's
start and its end checkpoint at or after the step's end: whatever changed inside a turn is
the turn's, whatever made it. Turns of two or more sessions around one step make it
``shared`` (all named, none guessed); a step inside no turn is a person's. The first
checkpoint's lines are ``initial``. A file rewind (or its undo) is not an author: the step
after a rewind's safety checkpoint starts, for the files it rewound, from the rewind's
target, so the lines it brought back keep the origins they had there.

Checkpoints pulled from another machine (``origin`` set) are not part of it: they are
another workspace's states, at times that machine's clock (or a crafted history) gave
them, and walked between this folder's own they would make every line a person's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Checkpoint
from ..store.facade import Store
from .origins import INITIAL, PERSON, SHARED, TURN, Origin, TurnRef


@dataclass(frozen=True, slots=True)
class Rewind:
    """A file rewind or undo: made the ``paths`` (None: all) what ``target`` held."""

    target: str
    paths: tuple[str, ...] | None

    def covers(self, path: str) -> bool:
        return self.paths is None or any(
            path == p or path.startswith(p + "/") for p in self.paths)


@dataclass(slots=True)
class History:
    checkpoints: list[Checkpoint]  # by time, ties in the order they were taken
    position: dict[str, int]  # checkpoint id → index in ``checkpoints``
    authors: list[Origin]  # authors[i]: who made the step into checkpoints[i]
    rewinds: dict[str, list[Rewind]]  # safety checkpoint id → the rewinds that followed it
    key: tuple[object, ...]

    def rewind_base(self, i: int, path: str) -> str | None:
        """The checkpoint the step into ``checkpoints[i]`` starts from for ``path``, when a
        rewind made it something other than the checkpoint before (the last rewind wins)."""
        if i == 0:
            return None
        base = None
        for rw in self.rewinds.get(self.checkpoints[i - 1].id, ()):
            if rw.covers(path) and rw.target in self.position:
                base = rw.target
        return base


def _own(store: Store) -> list[Checkpoint]:
    """This folder's own checkpoints (not those pulled from another machine)."""
    return [c for c in store.checkpoints() if c.origin is None]


def history_key(store: Store) -> tuple[object, ...]:
    """What a ``History`` depends on, cheaply: the checkpoints, the rewinds, and the size
    and head of every session that holds a checkpoint."""
    cps = _own(store)
    sessions = sorted({c.session_id for c in cps if c.session_id})
    marks: list[object] = []
    for sid in sessions:
        if store.has_session(sid):
            s = store.session_summary(sid)
            marks.append((sid, s.events, s.head))
    return (len(cps), cps[-1].id if cps else None, len(store.log()), *marks)


def load_history(store: Store) -> History:
    key = history_key(store)
    cps = sorted(_own(store), key=lambda c: c.ts)  # ties: in the order taken
    position = {c.id: i for i, c in enumerate(cps)}
    spans = _turn_spans(store, cps, position)
    authors = [_author(i, cps, spans[i]) for i in range(len(cps))]
    return History(cps, position, authors, _rewinds(store), key)


def _turn_spans(store: Store, cps: list[Checkpoint], position: dict[str, int]
                ) -> list[list[tuple[int, TurnRef]]]:
    """For each step, the turns around it with their start position (one per session: the
    innermost, when a session's branches overlap)."""
    out: list[list[tuple[int, TurnRef]]] = [[] for _ in cps]
    for sid in sorted({c.session_id for c in cps if c.session_id}):
        if not store.has_session(sid):
            continue
        header = store.session_summary(sid).header
        best: dict[int, tuple[int, TurnRef]] = {}
        for t in store.turns(sid):
            if t.before is None or t.after is None:
                continue  # a turn with no checkpoint at one end: what it changed is unknown
            b, a = position.get(t.before), position.get(t.after)
            if b is None or a is None or a <= b:
                continue
            ref = TurnRef(sid, t.id, t.index, t.prompt, header.agent, header.model, t.ts,
                          t.end_ts, t.before, t.after)
            for i in range(b + 1, a + 1):
                if i not in best or best[i][0] < b:
                    best[i] = (b, ref)
        for i, found in best.items():
            out[i].append(found)
    return out


def _author(i: int, cps: list[Checkpoint], around: list[tuple[int, TurnRef]]) -> Origin:
    cp = cps[i]
    if i == 0:
        return Origin(INITIAL, cp.id, None, (), None, cp.ts)
    prev = cps[i - 1]
    if not around:
        return Origin(PERSON, cp.id, prev.id, (), prev.ts, cp.ts)
    turns = tuple(ref for _, ref in sorted(around, key=lambda x: (x[1].ts, x[1].session_id)))
    return Origin(TURN if len(turns) == 1 else SHARED, cp.id, prev.id, turns, prev.ts, cp.ts)


def _rewinds(store: Store) -> dict[str, list[Rewind]]:
    out: dict[str, list[Rewind]] = {}
    for op in store.log():
        safety, target, paths = op.get("safety"), op.get("checkpoint"), op.get("paths")
        if op.get("mode") == "conversation" or not isinstance(safety, str) \
                or not isinstance(target, str):
            continue
        sel = tuple(p for p in paths if isinstance(p, str)) if isinstance(paths, list) else None
        out.setdefault(safety, []).append(Rewind(target, sel))
    return out
