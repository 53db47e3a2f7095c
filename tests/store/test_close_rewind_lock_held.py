"""``Store.close`` with a rewind left to finish (a server's, recorded after its answer)
while another process holds the rewind lock (its own rewind, or its open's recovery).

Before, the close waited for that lock twice, the lock's 30 s each (its own finish, then
``_close``'s): a minute on a server's event loop at shutdown, or at a workspace folder's
removal, then failed (``Conflict``). Now it waits ``CLOSE_WAIT`` once, leaves the rewind to
the next open (its files are in place, its journal pending: ``recover`` records it, as after
a crash), frees what the rewind held and closes the store. The waits are read from the
lock's poll, made to give up at once instead of waiting them out: no timing in the test."""

from __future__ import annotations

from pathlib import Path

from turnback import Store
from turnback.store.closing import CLOSE_WAIT

from .closing import close_with_the_rewind_lock_held


def test_a_close_waits_a_bounded_time_and_leaves_the_rewind_to_the_next_open(
        ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    first = store.checkpoint(label="first")
    (ws / "a.txt").write_text("two")
    store.checkpoint(label="second")
    store.rewind(first.id, finish_later=True)
    # not raised: the rewind is left to the next open
    asked = close_with_the_rewind_lock_held(store)
    assert asked and sum(t or 0.0 for t in asked) <= CLOSE_WAIT, asked
    assert store._unfinished is None
    assert store.oplog.pending() is not None  # left for the next open
    assert (ws / "a.txt").read_text() == "one"
    with Store.open(ws) as again:  # recorded once, nothing applied again
        assert [op.get("op") for op in again.oplog.all()] == ["rewind"]
        assert again.oplog.pending() is None
    assert (ws / "a.txt").read_text() == "one"
