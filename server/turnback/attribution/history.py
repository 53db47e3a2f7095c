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

from bisect import bisect_left, insort
from dataclasses import dataclass, field

import orjson
from blake3 import blake3

from ..models import Checkpoint
from ..sessions.turns import Turn
from ..store.facade import Store
from .linediff import common_head
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
class SessionSpans:
    """One session's turns as a load found them, kept for the next load: where each turn
    lies in the history and its reference, and the turns by where they end, so that a
    load after one more turn looks only at the turns that changed and the steps they and
    the new checkpoints cover."""

    agent: str
    model: str | None
    turns: list[Turn]  # as ``store.turns`` gave them (unchanged turns: the same objects)
    spans: list[tuple[int, int, TurnRef] | None]  # per turn: start, end position, reference
    by_end: list[tuple[int, int]]  # (end position, turn number) of the spans, sorted
    waiting: list[int]  # turns naming a checkpoint the history does not hold (pulled, or
    # taken while the load ran): looked at again by the next load


@dataclass(slots=True)
class History:
    checkpoints: list[Checkpoint]  # by time, ties in the order they were taken
    position: dict[str, int]  # checkpoint id → index in ``checkpoints``
    authors: list[Origin]  # authors[i]: who made the step into checkpoints[i]
    rewinds: dict[str, list[Rewind]]  # safety checkpoint id → the rewinds that followed it
    key: tuple[object, ...]
    # what the next load reuses: each step's turns, each session's turns and spans, the
    # sessions that hold a checkpoint, the digests
    around: list[tuple[TurnRef, ...]] = field(default_factory=list)
    sessions: dict[str, SessionSpans] = field(default_factory=dict)
    sids: frozenset[str] = frozenset()
    chain: list[bytes] = field(default_factory=list)  # chain[i]: digest of steps 0..i
    every: list[Checkpoint] = field(default_factory=list)  # the store's, pulled ones too

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


def _scan(store: Store, previous: History | None
          ) -> tuple[list[Checkpoint], list[Checkpoint], frozenset[str], bool]:
    """The store's checkpoints; this folder's own of them (not those pulled from another
    machine); the sessions that hold one; whether they continue ``previous``'s. When
    the store's list only grew since ``previous``, only the new checkpoints are looked at."""
    every = store.checkpoints()
    if previous is not None:
        m = len(previous.every)
        if m <= len(every) and every[:m] == previous.every:
            new = [c for c in every[m:] if c.origin is None]
            sids = previous.sids | {c.session_id for c in new if c.session_id}
            return every, previous.checkpoints + new, sids, True
    cps = [c for c in every if c.origin is None]
    return every, cps, frozenset(c.session_id for c in cps if c.session_id), False


def history_key(store: Store, previous: History | None = None) -> tuple[object, ...]:
    """What a ``History`` depends on, cheaply: the checkpoints, the rewinds, and the size
    and head of every session that holds a checkpoint. ``previous``: the last history
    loaded, to look only at the checkpoints added since."""
    _every, cps, sids, _ = _scan(store, previous)
    sessions = sorted(sids)
    marks: list[object] = []
    for sid in sessions:
        if store.has_session(sid):
            s = store.session_summary(sid)
            marks.append((sid, s.events, s.head))
    return (len(cps), cps[-1].id if cps else None, len(store.log()), *marks)


def load_history(store: Store, previous: History | None = None,
                 key: tuple[object, ...] | None = None) -> History:
    """The folder's history now. ``previous``, an earlier answer for the same store, makes
    it cheap after one more turn: when its checkpoints are still the first ones (a turn
    appends), only the turns the store hands back changed and the steps they or the new
    checkpoints cover are worked out again; the other steps keep their objects (authors,
    turn references), so a kept walk's origins stay the very objects the new history
    holds, and the digests of an unchanged beginning keep their values.
    ``key``: ``history_key(store)``, when the caller has just computed it."""
    key = history_key(store, previous) if key is None else key
    every, cps, sids, grew = _scan(store, previous)  # by time, ties in the order taken
    n = len(cps)
    old = previous.checkpoints if previous is not None else []
    # how many checkpoints at the start are the previous history's (so at its positions)
    kept = len(old) if grew or (len(old) <= n and cps[: len(old)] == old) \
        else common_head(cps, old)
    continued = previous is not None and kept == len(old)
    if previous is not None and continued:
        position = dict(previous.position)
        position.update((c.id, i) for i, c in enumerate(cps[kept:], kept))
    else:
        position = {c.id: i for i, c in enumerate(cps)}
    lo = kept if continued else 0  # the first step whose turns may have changed
    sessions: dict[str, SessionSpans] = {}
    for sid in sorted(sids):
        if not store.has_session(sid):
            continue
        was = previous.sessions.get(sid) if previous is not None else None
        sessions[sid], first = _session_spans(store, sid, position, was, continued)
        lo = min(lo, first)
    if previous is not None and any(sid not in sessions for sid in previous.sessions):
        lo = 0  # a session went away: the steps its turns covered are a person's now
    found = _turns_from(sessions, lo, n)
    before = previous.around if previous is not None else []
    around = before[:lo]
    authors = previous.authors[:lo] if previous is not None else []
    changed = n  # the first step whose author is not the previous history's
    for i in range(lo, n):
        s = found[i - lo]
        # in the order they started: by the step each began at (two turns opened in the same
        # millisecond keep the order of their checkpoints), then by time and session
        turns = (s[0][1],) if len(s) == 1 else \
            tuple(ref for _, ref in sorted(s, key=lambda x: (x[0], x[1].ts, x[1].session_id)))
        if previous is not None and i < kept and before[i] == turns:
            around.append(before[i])  # the same step with the same turns: the same author
            authors.append(previous.authors[i])
        else:
            around.append(turns)
            authors.append(_author(i, cps, turns))
            changed = min(changed, i)
    chain = previous.chain[:changed] if previous is not None else []
    return History(cps, position, authors, _rewinds(store), key, around, sessions, sids,
                   chain, every)


def _session_spans(store: Store, sid: str, position: dict[str, int],
                   was: SessionSpans | None, continued: bool) -> tuple[SessionSpans, int]:
    """The session's turns with where each lies in the history, and the first step whose
    turns may differ from ``was`` (the previous load's; ``continued``: at the same
    positions). Turns the store hands back unchanged (the same objects, at the start) keep
    their spans, but for those that named a checkpoint the history did not hold then
    (taken while the last load ran, or pulled from another machine): looked at again. A
    turn handed back anew keeps its reference when it is equal (one republished only
    because the session's head moved changes nothing here)."""
    header = store.session_summary(sid).header
    turns = store.turns(sid)
    same = 0
    if was is not None and continued and (was.agent, was.model) == (header.agent,
                                                                      header.model):
        same = common_head(turns, was.turns)
    olds = was.spans if was is not None else []
    spans = olds[:same]
    todo = [j for j in was.waiting if j < same] if was is not None and same else []
    todo.extend(range(same, len(turns)))
    waiting: list[int] = []
    for j in todo:
        t = turns[j]
        span = None
        if t.before is not None and t.after is not None:
            # (a turn with no checkpoint at one end: what it changed is unknown)
            b, a = position.get(t.before), position.get(t.after)
            if b is None or a is None:
                waiting.append(j)
            elif a > b:
                ref = TurnRef(sid, t.id, t.index, t.prompt, header.agent, header.model,
                              t.ts, t.end_ts, t.before, t.after)
                prior = olds[j] if j < len(olds) else None
                if prior is not None and prior[2] == ref:
                    ref = prior[2]
                span = (b, a, ref)
        if j < same:
            spans[j] = span
        else:
            spans.append(span)
    first = len(position)
    if same:
        by_end = list(was.by_end) if was is not None else []
        for j in todo + list(range(len(turns), len(olds))):
            new = spans[j] if j < len(spans) else None
            prior = olds[j] if j < len(olds) else None
            if new == prior:
                continue
            if prior is not None:
                first = min(first, prior[0] + 1)
                del by_end[bisect_left(by_end, (prior[1], j))]
            if new is not None:
                first = min(first, new[0] + 1)
                insort(by_end, (new[1], j))
    else:
        by_end = sorted((sp[1], j) for j, sp in enumerate(spans) if sp is not None)
        if continued:  # else every step is worked out again anyway
            for j in range(max(len(spans), len(olds))):
                new = spans[j] if j < len(spans) else None
                prior = olds[j] if j < len(olds) else None
                if new != prior:
                    first = min(first, *(sp[0] + 1 for sp in (new, prior) if sp is not None))
    return SessionSpans(header.agent, header.model, turns, spans, by_end, waiting), first


def _turns_from(sessions: dict[str, SessionSpans], lo: int, n: int
                ) -> list[list[tuple[int, TurnRef]]]:
    """For each step from ``lo`` on, the turns around it with their start position (one per
    session: the innermost, when a session's branches overlap; of two starting at the same
    checkpoint, the one first in the session)."""
    out: list[list[tuple[int, TurnRef]]] = [[] for _ in range(lo, n)]
    for sid in sorted(sessions):
        s = sessions[sid]
        best: dict[int, tuple[int, TurnRef]] = {}
        for j in sorted(j for _, j in s.by_end[bisect_left(s.by_end, (lo, -1)):]):
            span = s.spans[j]
            assert span is not None
            b, a, ref = span
            for i in range(max(b + 1, lo), a + 1):
                if i not in best or best[i][0] < b:
                    best[i] = (b, ref)
        for i, found in best.items():
            out[i - lo].append(found)
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
