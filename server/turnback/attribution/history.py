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

from dataclasses import dataclass, field
from typing import Any

import orjson
from blake3 import blake3

from ..models import Checkpoint
from ..sessions.turns import Turn
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
    # what the next load reuses: each step's turns, each turn's reference, the digests
    around: list[tuple[TurnRef, ...]] = field(default_factory=list)
    refs: dict[tuple[str, str], tuple[Turn, str, str | None, TurnRef]] = \
        field(default_factory=dict)
    chain: list[bytes] = field(default_factory=list)  # chain[i]: digest of steps 0..i

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

    def digest(self, position: int) -> str:
        """What the steps up to ``position`` hold (checkpoint ids, who made each step, the
        rewinds among them), as a hex digest: a walk saved there still holds while it is
        the same. Chained step by step, so a history continued from an earlier one
        computes only its new steps' part."""
        chain = self.chain
        for i in range(len(chain), position + 1):
            h = blake3(chain[-1] if chain else b"")
            h.update(orjson.dumps([self.checkpoints[i].id, _key(self.authors[i])]))
            chain.append(h.digest())
        h = blake3(chain[position])
        ids = {c.id for c in self.checkpoints[: position + 1]} & set(self.rewinds)
        h.update(orjson.dumps([[k, [[r.target, r.paths] for r in self.rewinds[k]]]
                               for k in sorted(ids)]))
        return h.hexdigest()


def _key(o: Origin) -> list[object]:
    return [o.kind, o.checkpoint, o.previous, o.since, o.until,
            [[t.session_id, t.turn_id, t.index, t.prompt, t.agent, t.model, t.ts, t.end_ts,
              t.before, t.after] for t in o.turns]]


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


def load_history(store: Store, previous: History | None = None,
                 key: tuple[object, ...] | None = None) -> History:
    """The folder's history now. ``previous``, an earlier answer for the same store, lets
    the steps and turns that did not change keep their objects (and the digests of an
    unchanged beginning their values): after one more turn, what changed is worked out
    again, and a kept walk's origins stay the very objects the new history holds.
    ``key``: ``history_key(store)``, when the caller has just computed it."""
    key = history_key(store) if key is None else key
    cps = _own(store)  # by time, ties in the order they were taken
    position = {c.id: i for i, c in enumerate(cps)}
    refs: dict[tuple[str, str], tuple[Turn, str, str | None, TurnRef]] = {}
    spans = _turn_spans(store, cps, position, previous.refs if previous else {}, refs)
    around = [(s[0][1],) if len(s) == 1 else
              tuple(ref for _, ref in sorted(s, key=lambda x: (x[1].ts, x[1].session_id)))
              for s in spans]
    # the steps at the start that are the previous history's, unchanged: their authors
    # (and digests) are kept
    same = 0 if previous is None else min(_same_start(cps, previous.checkpoints),
                                          _same_start(around, previous.around))
    authors = previous.authors[:same] if previous is not None else []
    authors.extend(_author(i, cps, around[i]) for i in range(same, len(cps)))
    chain = previous.chain[:same] if previous is not None else []
    return History(cps, position, authors, _rewinds(store), key, around, refs, chain)


def _same_start(a: list[Any], b: list[Any]) -> int:
    """How many items ``a`` and ``b`` have alike at their start: by bisection over
    slices, compared in C (items the same object compare at once)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _turn_spans(store: Store, cps: list[Checkpoint], position: dict[str, int],
                known: dict[tuple[str, str], tuple[Turn, str, str | None, TurnRef]],
                refs: dict[tuple[str, str], tuple[Turn, str, str | None, TurnRef]]
                ) -> list[list[tuple[int, TurnRef]]]:
    """For each step, the turns around it with their start position (one per session: the
    innermost, when a session's branches overlap). A turn the store hands back unchanged
    (the same object) keeps its reference from ``known``; ``refs`` gets them all."""
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
            hit = known.get((sid, t.id))
            if hit is not None and hit[0] is t and hit[1] == header.agent \
                    and hit[2] == header.model:
                ref = hit[3]
            else:
                ref = TurnRef(sid, t.id, t.index, t.prompt, header.agent, header.model, t.ts,
                              t.end_ts, t.before, t.after)
            refs[(sid, t.id)] = (t, header.agent, header.model, ref)
            for i in range(b + 1, a + 1):
                if i not in best or best[i][0] < b:
                    best[i] = (b, ref)
        for i, found in best.items():
            out[i].append(found)
    return out


def _author(i: int, cps: list[Checkpoint], turns: tuple[TurnRef, ...]) -> Origin:
    cp = cps[i]
    if i == 0:
        return Origin(INITIAL, cp.id, None, (), None, cp.ts)
    prev = cps[i - 1]
    if not turns:
        return Origin(PERSON, cp.id, prev.id, (), prev.ts, cp.ts)
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
