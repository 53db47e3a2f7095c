"""A rewind of a ``--store`` store replaced after its journal was written (a copy put at
its path), whose files then fail (a full disk at its first file): the workspace is put
back and the user told it failed. Its journal was ended **by path** (``_roll_back``), in
the copy: the journal in the store the rewind wrote it in stayed whole and signed, and
that store's next open applied the rewind the user was told had failed (redteam48). It is
ended in the held root now, as a finished rewind's is (with descriptors; by path the
rewind is refused before its files, its journal retracted, ``trust36``)."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.rewind.apply import Applier
from turnback.rewind.oplog import OpLog

from .swap_setup import put_back, replace_store


def test_a_rolled_back_rewind_is_never_applied_later(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store"
    moved = tmp_path / "moved"
    real_begin, real_apply = OpLog.begin, Applier.apply
    calls = []

    def then_replaced(self: OpLog, *a: Any, **kw: Any) -> Any:
        out = real_begin(self, *a, **kw)
        replace_store(store_dir, moved, "a copy", moved)
        return out

    def full_at_first_file(self: Applier, *a: Any, **kw: Any) -> list[str]:
        calls.append(a)
        if len(calls) == 1:  # the rewind's own, not its roll-back's
            raise OSError(errno.ENOSPC, "No space left on device", str(ws / "f.txt"))
        return real_apply(self, *a, **kw)

    with Store.open(ws, store_dir=store_dir) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        with mock.patch.object(OpLog, "begin", then_replaced), \
                mock.patch.object(Applier, "apply", full_at_first_file), \
                pytest.raises((OSError, TurnbackError)):
            store.rewind(first.id)
    assert (ws / "f.txt").read_text() == "two\n"  # refused, the workspace as it was
    put_back(store_dir, moved)
    assert not (store_dir / "journal.json").read_bytes()  # before: whole, signed
    with Store.open(ws, store_dir=store_dir) as again:  # before: applied the rewind
        assert not again.oplog.all()
    assert (ws / "f.txt").read_text() == "two\n"
