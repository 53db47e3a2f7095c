"""A rewind refused after its journal was written and before its first file: the journal
is retracted where it was written, so no later open applies the rewind.

It stayed pending: the safety checkpoint's listing refused (a disk full; by path, a store
replaced), or the journal's sync failing, raised out of the rewind with its journal whole
and signed in the store, and that store's next open recovered it: **the rewind the user
was told was refused was applied** (trust35, left open). The swap by path is in
``test_replaced_store_after_journal.py``; here a failure at each step, in both modes.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store
from turnback.rewind import oplog
from turnback.rewind.oplog import OpLog
from turnback.store.checkpoint_index import CheckpointIndex


def _disk_full(*_a: Any, **_kw: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device (planted)")


@pytest.mark.parametrize("step", ["the safety checkpoint's listing", "the journal's sync"])
def test_a_rewind_refused_after_its_journal_is_never_applied(tmp_path: Path, step: str
                                                             ) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store"
    with Store.open(ws, store_dir=store_dir) as store:
        store.config.fsync = "commit"  # the journal's sync is made
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        real_begin, real_add = OpLog.begin, CheckpointIndex.add
        begun: list[bool] = []

        def begin(self: OpLog, *a: Any, **kw: Any) -> Any:
            out = real_begin(self, *a, **kw)  # type: ignore[arg-type]
            begun.append(True)
            return out

        def add(self: CheckpointIndex, *a: Any, **kw: Any) -> None:
            if begun:  # the listing after the journal, not the first checkpoint's
                _disk_full()
            real_add(self, *a, **kw)

        patches = [mock.patch.object(OpLog, "begin", begin)]
        if step == "the journal's sync":
            patches.append(mock.patch.object(oplog, "fsync_all", _disk_full))
        else:
            patches.append(mock.patch.object(CheckpointIndex, "add", add))
        with patches[0], patches[1], pytest.raises(OSError, match="planted"):
            store.rewind(first.id)
        assert (ws / "f.txt").read_text() == "two\n"  # refused before its files
        assert not (store_dir / "journal.json").read_bytes()  # retracted where written
    with Store.open(ws, store_dir=store_dir) as again:
        assert not again.oplog.all()  # no rewind recorded
        assert again.oplog.pending() is None
    assert (ws / "f.txt").read_text() == "two\n"  # and none applied by the open
