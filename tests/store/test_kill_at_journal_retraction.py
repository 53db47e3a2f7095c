"""A process killed (``os._exit`` in a forked child: no clean-up) at the steps ``trust36``
added to a rewind's journal: in its sync through the descriptor it was written with, and
in the retraction of a rewind refused before its first file (before the retraction's
truncate, and after it). No file was touched at any of them, so the next open applies
none: a refused rewind killed before its retraction was applied by it until trust37
(the journal whole, the user about to be told it was refused); one killed in its
journal's sync likewise (the user told nothing, nothing changed). A rewind killed after
its first file is applied and recorded once, and undo reverts it."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.rewind import oplog
from turnback.rewind.oplog import OpLog
from turnback.rewind.written_journal import WrittenJournal
from turnback.store.checkpoint_index import CheckpointIndex


def _die(*_a: Any, **_kw: Any) -> None:
    os._exit(0)


def _dying_once_in_place(real: Any, path: Path) -> Any:
    """``real`` (a rename), then a kill once ``path`` holds the rewind's content."""
    def renamed(*a: Any, **kw: Any) -> None:
        real(*a, **kw)
        if path.read_text() == "one":
            os._exit(0)
    return renamed


def _killed(ws: Path, step: str) -> None:
    pid = os.fork()
    if pid == 0:  # the child: nothing here returns
        try:
            store = Store.open(ws)
            store.config.fsync = "commit"  # the journal's sync is made
            first = store.checkpoints()[0]
            if step == "in the journal's sync":
                oplog.fsync_all = _die  # type: ignore[assignment]
            elif step == "after the first file":
                # a rename into place: by descriptors os.rename, by path os.replace
                for name in ("rename", "replace"):
                    setattr(os, name, _dying_once_in_place(getattr(os, name), ws / "a.txt"))
            else:
                real_begin, real_add = OpLog.begin, CheckpointIndex.add
                begun: list[bool] = []

                def begin(self: OpLog, *a: Any, **kw: Any) -> Any:
                    out = real_begin(self, *a, **kw)
                    begun.append(True)
                    return out

                def add(self: CheckpointIndex, *a: Any, **kw: Any) -> None:
                    if begun:  # the safety checkpoint's listing: refused (a full disk)
                        raise OSError(errno.ENOSPC, "No space left on device")
                    real_add(self, *a, **kw)

                OpLog.begin = begin  # type: ignore[method-assign]
                CheckpointIndex.add = add  # type: ignore[method-assign]

                def retract(self: WrittenJournal) -> None:
                    if step == "after the retraction's truncate":
                        os.ftruncate(self.fd, 0)
                    os._exit(0)

                WrittenJournal.retract = retract  # type: ignore[method-assign]
            store.rewind(first.id)
        finally:
            os._exit(3)  # the step was never reached: the test fails below
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("step", ["in the journal's sync", "before the retraction's truncate",
                                  "after the retraction's truncate", "after the first file"])
def test_a_kill_at_each_new_journal_step(ws: Path, step: str) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
    _killed(ws, step)
    applied = step == "after the first file"
    assert (ws / "a.txt").read_text() == ("one" if applied else "two")
    with Store.open(ws) as store:
        assert store.oplog.pending() is None
        assert [op.get("op") for op in store.oplog.all()] == (["rewind"] if applied else [])
    assert (ws / "a.txt").read_text() == ("one" if applied else "two")
    with Store.open(ws) as store:  # opened again: nothing applied twice
        assert len(store.oplog.all()) == (1 if applied else 0)
        if applied:
            store.undo()
    assert (ws / "a.txt").read_text() == "two"
