"""Store objects as the server answers them, where the answer says more than the stored
record: a checkpoint's ``safetyOf`` (docs/PROTOCOL.md, ``turnback/checkpoints``)."""

from __future__ import annotations

from typing import Any

from ...models import Checkpoint
from ...store.safety_names import safety_of
from . import methods

JSON = dict[str, Any]


def checkpoint_json(cp: Checkpoint) -> JSON:
    """``cp``'s record, with ``safetyOf: {op, checkpoint}`` when it is a rewind's or an
    undo's safety checkpoint, so that a client names it without reading its label (an
    older client reads the label, which is unchanged)."""
    out = cp.to_json()
    found = safety_of(cp)
    if found is not None:
        out[methods.SAFETY_OF] = {"op": found[0], "checkpoint": found[1]}
    return out
