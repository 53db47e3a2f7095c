"""Store objects as the server answers them, where the answer says more than the stored
record: a checkpoint's ``safetyOf`` (docs/PROTOCOL.md, ``turnback/checkpoints``), written in
the store (``store/safety_names.py``) so that ``turnback checkpoints --json`` says the same.
Every answer holding a checkpoint says it so (``turnback/fileHistory``,
``turnback/createCheckpoint``): the stored record is never sent as it is."""

from __future__ import annotations

from collections.abc import Iterable

from ...models import Checkpoint
from ...store.facade import Store
from ...store.safety_names import checkpoint_json, safety_of

__all__ = ["checkpoint_json", "safety_pool"]


def safety_pool(store: Store, shown: Iterable[Checkpoint]) -> dict[str, Checkpoint]:
    """The checkpoints that the words of the safety checkpoints among ``shown`` may name:
    every one of the store (of any session), read only when one of ``shown`` is such."""
    if not any(safety_of(c) is not None for c in shown):
        return {}
    return {c.id: c for c in store.checkpoints(None)}
