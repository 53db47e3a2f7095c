"""Lines added and removed per author: every step of the folder's history, counted for the
agent whose turn made it, for people (steps between turns), or for the agents of turns
open at once (``shared``). A rewind adds and removes nothing: the step after it is counted
from the rewind's target for the files it rewound (docs/ATTRIBUTION.md)."""

from __future__ import annotations

from dataclasses import dataclass

from ..events import JSON, parse_iso
from ..store.facade import Store
from .history import History
from .origins import INITIAL, PERSON, SHARED, TURN

PEOPLE = "people"


@dataclass(slots=True)
class AuthorStats:
    author: str  # an agent id, "a + b" for turns open at once, or PEOPLE
    added: int = 0
    removed: int = 0
    files: int = 0  # file changes (a file changed in three steps counts three)
    turns: int = 0  # turns (or steps between turns, for people) that changed something

    def to_json(self) -> JSON:
        return {"author": self.author, "linesAdded": self.added, "linesRemoved": self.removed,
                "fileChanges": self.files, "turns": self.turns}


def by_author(store: Store, history: History, since: float | None = None) -> list[AuthorStats]:
    """Per author, most lines added first; ``since``: steps ending at or after (epoch s)."""
    out: dict[str, AuthorStats] = {}
    seen: dict[str, set[object]] = {}
    for i, author in enumerate(history.authors):
        if author.kind == INITIAL or author.previous is None:
            continue
        cp = history.checkpoints[i]
        if since is not None and (parse_iso(cp.ts) or 0.0) < since:
            continue
        changes = {c.path: c for c in store.changes(author.previous, cp.id)}
        for rw in history.rewinds.get(author.previous, ()):
            if rw.target not in history.position:
                continue
            for path in list(changes) if rw.paths is None else [
                    p for p in changes if rw.covers(p)]:
                changes.pop(path)
            for c in store.changes(rw.target, cp.id, list(rw.paths) if rw.paths else None):
                changes[c.path] = c
        if not changes:
            continue
        unit: object
        if author.kind == TURN:
            name, unit = author.turns[0].agent, (author.turns[0].session_id,
                                                 author.turns[0].turn_id)
        elif author.kind == SHARED:
            name = " + ".join(sorted({t.agent for t in author.turns}))
            unit = tuple((t.session_id, t.turn_id) for t in author.turns)
        else:
            assert author.kind == PERSON
            name, unit = PEOPLE, (cp.id,)
        s = out.setdefault(name, AuthorStats(name))
        s.added += sum(c.lines_added for c in changes.values())
        s.removed += sum(c.lines_removed for c in changes.values())
        s.files += len(changes)
        units = seen.setdefault(name, set())
        if unit not in units:
            units.add(unit)
            s.turns += 1
    return sorted(out.values(), key=lambda s: (-s.added, s.author))
