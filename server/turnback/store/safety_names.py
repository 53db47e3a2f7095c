"""A rewind's and an undo's safety checkpoints: the label the store gives them, what a
label says back (which operation, to which checkpoint), and the words people read.

The store labels the checkpoint a rewind takes first "before rewind to <id>", an undo's
"before undo to <id of the safety checkpoint it goes back to>". Shown as stored, an undo
of an undo reads "before undo to 9dc259fdc4ad", and named recursively it nests ("before
undo to “before rewind to “Tests pass””"). ``words`` says it once: "before rewind to
“Tests pass”", "before undo of rewind to “Tests pass”". Since ux33 the record stores
what it protects (``Checkpoint.safety_of``); an older one is read from its label. Both
are store text (anyone who can write the store writes them): only an automatic
checkpoint of this workspace counts, a label only when it has this shape whole, and
what it names is only a name, never an id that anything acts on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..events import Event, Kind
from ..models import Checkpoint

REWIND = "rewind"
UNDO = "undo"
# the answer's field and its words' key (server/rpc/methods.py SAFETY_OF, SAFETY_WORDS)
SAFETY_OF = "safetyOf"
SAFETY_WORDS = "words"

_LABEL = re.compile(r"before (rewind|undo) to ([0-9a-f]{12,64})")
# names nest this deep at most: a rewind to a rewind's safety checkpoint names what that
# one was taken before, and no further
_DEPTH = 3
# an undo's chain of undos (undo, redo, undo, …) is followed this far to its rewind
_HOPS = 64
# a named checkpoint's own label is shown up to this much (the editor's title width)
_TITLE = 80


def safety_label(op: str, target_id: str) -> str:
    """The label of the safety checkpoint of ``op`` (rewind or undo) to ``target_id``."""
    return f"before {op} to {target_id}"


def safety_of(cp: Checkpoint) -> tuple[str, str] | None:
    """(operation, checkpoint id) when ``cp`` is a rewind's or an undo's safety checkpoint:
    automatic, of this workspace, with its record's ``safetyOf`` (written since ux33) or,
    in an older record, the whole label in the store's shape."""
    if not cp.auto or cp.origin is not None:
        return None
    if cp.safety_of is not None:
        return cp.safety_of
    m = _LABEL.fullmatch(cp.label)
    return (m[1], m[2]) if m is not None else None


def _title(label: str) -> str:
    flat = " ".join(label[: _TITLE * 4].split())
    return flat if len(flat) <= _TITLE else flat[: _TITLE - 1] + "…"


def words(cp: Checkpoint, by_id: Mapping[str, Checkpoint], depth: int = _DEPTH) -> str:
    """``cp``'s label in words: a safety checkpoint says what it was taken before,
    naming a rewind's target by its own words ("before rewind to “Tests pass”"), an
    undo's by the rewind it undid ("before undo of rewind to “Tests pass”", "before redo
    of …" when it undid an undo); any other label, or one naming an unknown checkpoint,
    as stored. The server sends these words to the editor (``safetyOf.words``), so that
    they are written here only."""
    found = safety_of(cp)
    if found is None:
        return cp.label
    op, target_id = found
    if op == UNDO:
        return f"before {undone(target_id, by_id, depth)}"
    if depth <= 1:
        return "before rewind"
    target = by_id.get(target_id)
    if target is None:
        return cp.label
    return f"before rewind to “{_title(words(target, by_id, depth - 1))}”"


def undone(target_id: str, by_id: Mapping[str, Checkpoint], depth: int = _DEPTH) -> str:
    """What an undo to ``target_id`` did, in words: an undo goes back to the safety
    checkpoint of the operation it undoes, a rewind's ("undo of rewind to “X”") or an
    undo's, whose undo is a redo ("redo of rewind to “X”"); the chain is followed (bounded,
    a cycle in a written store stops it) to the rewind at its end. A chain that ends
    nowhere known: "undo". An undo's safety checkpoint and its event say these words."""
    hops = 1
    seen: set[str] = set()
    target = by_id.get(target_id)
    while target is not None and target.id not in seen and hops <= _HOPS:
        seen.add(target.id)
        found = safety_of(target)
        if found is None:
            break
        op, next_id = found
        if op == REWIND:
            verb = "undo" if hops % 2 else "redo"
            rewound = by_id.get(next_id) if depth > 1 else None
            if rewound is None:
                return f"{verb} of rewind"
            return f"{verb} of rewind to “{_title(words(rewound, by_id, depth - 1))}”"
        hops += 1
        target = by_id.get(next_id)
    return "undo"


def has_undo(events: Iterable[Event]) -> bool:
    """Whether any of ``events`` is an undo (whose summary wants the checkpoints)."""
    return any(e.kind == Kind.REWIND and e.data.get("undo") for e in events)


def event_summary(event: Event, by_id: Mapping[str, Checkpoint], width: int = 120) -> str:
    """``summarize(event, width)``, an undo's naming what it undid: "undo of rewind to
    “Tests pass” (files)", "redo of rewind to …" (its event says only "undo (files)",
    so that undo, redo and undo again of one rewind read alike). Its data's ``checkpoint``
    is the safety checkpoint it went back to; one not in ``by_id`` is summarized as before."""
    # imported here: a checkpoint imports this module (for its label) and never summarizes
    from ..sessions.event_summary import summarize

    d = event.data
    target = d.get("checkpoint")
    if event.kind != Kind.REWIND or not d.get("undo") or not isinstance(target, str) \
            or target not in by_id:
        return summarize(event, width)
    mode = d.get("mode")
    text = " ".join(f"{undone(target, by_id)} ({mode if isinstance(mode, str) else 'files'})"
                    .split())
    return text if len(text) <= width else text[: width - 1] + "…"


def checkpoint_json(cp: Checkpoint, by_id: Mapping[str, Checkpoint]) -> dict[str, Any]:
    """``cp``'s record as the server's listing and ``turnback checkpoints --json`` show it:
    ``safetyOf: {op, checkpoint, words}`` when it is a rewind's or an undo's safety
    checkpoint (stored, or read from an older record's label), so that a client names it
    without reading its label, in the words the CLI prints; ``by_id``: the checkpoints its
    words may name. A record's field where ``safety_of`` finds none is left out: a user's
    checkpoint, or a pulled one (its field names another machine's operation, which no
    undo here goes back to). An older client reads the label, which is unchanged."""
    out = cp.to_json()
    out.pop(SAFETY_OF, None)
    found = safety_of(cp)
    if found is not None:
        out[SAFETY_OF] = {"op": found[0], "checkpoint": found[1], SAFETY_WORDS: words(cp, by_id)}
    return out
