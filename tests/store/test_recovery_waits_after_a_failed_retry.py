"""A recovery left waiting for the op log (a FIFO at ``oplog.jsonl``, trust36) is tried
again by the next write; when that try fails for another reason (here a file stands where
the locks' folder was), it must still wait. Before (redteam48) the try cleared the wait
first and a failure left it cleared: the writes after it went ahead with the rewind's
journal pending, the workspace perhaps half rewound, and the recovery never ran again
in that process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError


def test_a_failed_late_recovery_still_waits(ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
        store.rewind(first.id, finish_later=True)
        store.leave_unfinished()
    oplog = ws / ".turnback" / "oplog.jsonl"
    if oplog.exists():
        oplog.unlink()
    os.mkfifo(oplog)
    locks = ws / ".turnback" / "locks"
    with Store.open(ws) as store:
        oplog.unlink()
        locks.rename(ws.parent / "locks-aside")
        locks.write_text("")  # a file where the locks' folder was: no lock can be taken
        with pytest.raises((OSError, TurnbackError)):
            store.checkpoint(label="refused")
        locks.unlink()
        (ws.parent / "locks-aside").rename(locks)
        store.checkpoint(label="after")  # before: went ahead, the journal left pending
        assert store.oplog.pending() is None  # the recovery ran first
        assert [op.get("op") for op in store.oplog.all()] == ["rewind"]
    with Store.open(ws) as store:
        assert "refused" not in [cp.label for cp in store.checkpoints()]
        assert [op.get("op") for op in store.oplog.all()] == ["rewind"]  # recorded once
