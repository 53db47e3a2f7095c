"""A rewind's and an undo's safety checkpoints: the label the store gives them, what a
label says back (which operation, to which checkpoint), and the words people read.

The store labels the checkpoint a rewind takes first "before rewind to <id>", an undo's
"before undo to <id of the safety checkpoint it goes back to>". Shown as stored, an undo
of an undo reads "before undo to 9dc259fdc4ad", and named recursively it nests ("before
undo to “before rewind to “Tests pass””"). ``words`` says it once: "before rewind to
“Tests pass”", "before undo". A label is store text (anyone who can write the store
writes it): only an automatic checkpoint whose whole label has this shape counts, and
what it names is only a name, never an id that anything acts on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..models import Checkpoint

REWIND = "rewind"
UNDO = "undo"

_LABEL = re.compile(r"before (rewind|undo) to ([0-9a-f]{12,64})")
# names nest this deep at most: a rewind to a rewind's safety checkpoint names what that
# one was taken before, and no further
_DEPTH = 3
# a named checkpoint's own label is shown up to this much (the editor's title width)
_TITLE = 80


def safety_label(op: str, target_id: str) -> str:
    """The label of the safety checkpoint of ``op`` (rewind or undo) to ``target_id``."""
    return f"before {op} to {target_id}"


def safety_of(cp: Checkpoint) -> tuple[str, str] | None:
    """(operation, checkpoint id) when ``cp`` is a rewind's or an undo's safety checkpoint
    by its label: automatic, of this workspace, the whole label in the store's shape."""
    if not cp.auto or cp.origin is not None:
        return None
    m = _LABEL.fullmatch(cp.label)
    return (m[1], m[2]) if m is not None else None


def _title(label: str) -> str:
    flat = " ".join(label[: _TITLE * 4].split())
    return flat if len(flat) <= _TITLE else flat[: _TITLE - 1] + "…"


def words(cp: Checkpoint, by_id: Mapping[str, Checkpoint], depth: int = _DEPTH) -> str:
    """``cp``'s label in words: a safety checkpoint says what it was taken before,
    naming a rewind's target by its own words ("before rewind to “Tests pass”"), an
    undo's as "before undo" (its target is a safety checkpoint itself: named, it
    nested); any other label, or one naming an unknown checkpoint, as stored."""
    found = safety_of(cp)
    if found is None:
        return cp.label
    op, target_id = found
    if op == UNDO:
        return "before undo"
    if depth <= 1:
        return "before rewind"
    target = by_id.get(target_id)
    if target is None:
        return cp.label
    return f"before rewind to “{_title(words(target, by_id, depth - 1))}”"
