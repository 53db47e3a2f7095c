"""Store objects as the server answers them, where the answer says more than the stored
record: a checkpoint's ``safetyOf`` (docs/PROTOCOL.md, ``turnback/checkpoints``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...models import Checkpoint
from ...store.safety_names import safety_of, words
from . import methods

JSON = dict[str, Any]


def checkpoint_json(cp: Checkpoint, by_id: Mapping[str, Checkpoint]) -> JSON:
    """``cp``'s record, with ``safetyOf: {op, checkpoint, words}`` when it is a rewind's or
    an undo's safety checkpoint (stored, or read from an older record's label), so that a
    client names it without reading its label, in the words the CLI prints
    (``store/safety_names.py``: written once); ``by_id``: the checkpoints its words may
    name. A record's field where ``safety_of`` finds none (a user's checkpoint) is left
    out. An older client reads the label, which is unchanged."""
    out = cp.to_json()
    out.pop(methods.SAFETY_OF, None)
    found = safety_of(cp)
    if found is not None:
        out[methods.SAFETY_OF] = {"op": found[0], "checkpoint": found[1],
                                  methods.SAFETY_WORDS: words(cp, by_id)}
    return out
