"""Store objects as the server answers them, where the answer says more than the stored
record: a checkpoint's ``safetyOf`` (docs/PROTOCOL.md, ``turnback/checkpoints``), written in
the store (``store/safety_names.py``) so that ``turnback checkpoints --json`` says the same."""

from __future__ import annotations

from ...store.safety_names import checkpoint_json

__all__ = ["checkpoint_json"]
