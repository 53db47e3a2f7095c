"""``Store.close`` with a rewind whose record was refused (its files in place, its journal
marked applied) while another process holds the rewind lock.

``trust35`` bounded the close's wait for a rewind left to finish (``CLOSE_WAIT``, once,
then left to the next open), but a record refused earlier is retried by ``_close``'s
``finish_rewind`` too, and there a lock held by another process raised ``Conflict`` out of
the close: the store's held root, its stat cache and its scanner were never closed (a
second close does nothing: they stayed open for the process's life). Now a close that
cannot take the lock in ``CLOSE_WAIT`` leaves the record to the next open (its journal is
pending: ``recover`` records it without applying anything again) and closes the store.
The lock's poll is made to give up at once: no timing in the test."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

from turnback import Store
from turnback.rewind.oplog import OpLog
from turnback.store.closing import CLOSE_WAIT

from .closing import close_with_the_rewind_lock_held


def _refused_rewind(ws: Path) -> Store:
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    first = store.checkpoint(label="first")
    (ws / "a.txt").write_text("two")
    store.checkpoint(label="second")
    real_add = OpLog.add

    def refused(self: OpLog, *a: object, **kw: object) -> None:
        raise OSError(28, "No space left on device")

    with mock.patch.object(OpLog, "add", refused), pytest.raises(OSError):
        store.rewind(first.id)
    assert OpLog.add is real_add
    assert store._refused_record is not None
    return store


def test_a_close_with_a_refused_record_and_the_lock_held_closes_the_store(ws: Path) -> None:
    store = _refused_rewind(ws)
    # before: Conflict out of the close, the store half closed
    asked = close_with_the_rewind_lock_held(store)
    assert asked and sum(t or 0.0 for t in asked) <= CLOSE_WAIT, asked
    assert store._root_held.folder() is None  # its held root closed
    assert store.oplog.pending() is not None  # left for the next open
    assert (ws / "a.txt").read_text() == "one"
    with Store.open(ws) as again:  # recorded once, nothing applied again
        assert [op.get("op") for op in again.oplog.all()] == ["rewind"]
        assert again.oplog.pending() is None
        assert [e.kind for e in again.backend.load(again.oplog.all()[0]["session"]).events
                ].count("rewind") == 1
    assert (ws / "a.txt").read_text() == "one"
