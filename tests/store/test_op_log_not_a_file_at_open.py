"""A FIFO at ``oplog.jsonl`` while a rewind's journal is pending (its files in place, its
record left to the next open). The open's recovery must read the log to know whether the
rewind was recorded: it refused, and with it **every open of the store** (``NotRegular``)
until the FIFO was moved. Now the store opens (trust36): reads work, every write is refused
naming the FIFO and what to do, nothing is applied; once it is moved, the next write
finishes the recovery (the rewind recorded once) and goes on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged


def test_the_store_opens_and_writes_wait_for_the_op_log(ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
        store.rewind(first.id, finish_later=True)
        store.leave_unfinished()  # as a close that could not take the rewind lock leaves it
    oplog = ws / ".turnback" / "oplog.jsonl"
    if oplog.exists():
        oplog.unlink()
    os.mkfifo(oplog)
    assert (ws / "a.txt").read_text() == "one"
    with Store.open(ws) as store:  # before: NotRegular out of the open
        assert store.oplog.pending() is not None  # left as it was
        assert store.checkpoints()[0].label == "first"  # reads work
        for write in (lambda: store.checkpoint(label="x"), lambda: store.rewind(first.id),
                      lambda: store.fork(store.session("workspace").head or "")):
            with pytest.raises(StoreDamaged, match=r"oplog\.jsonl is a FIFO.*moved away"):
                write()
        assert [cp.label for cp in store.checkpoints()][-1] != "x"  # nothing written
        oplog.unlink()
        store.checkpoint(label="after")  # the recovery done first, then the checkpoint
        assert [op.get("op") for op in store.oplog.all()] == ["rewind"]
        assert store.oplog.pending() is None
    with Store.open(ws) as store:
        assert [op.get("op") for op in store.oplog.all()] == ["rewind"]  # recorded once
    assert (ws / "a.txt").read_text() == "one"
