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
from unittest import mock

from turnback import Store
from turnback.errors import Conflict
from turnback.fs import locks
from turnback.fs.locks import FileLock
from turnback.store.closing import CLOSE_WAIT


def test_a_close_waits_a_bounded_time_and_leaves_the_rewind_to_the_next_open(
        ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    first = store.checkpoint(label="first")
    (ws / "a.txt").write_text("two")
    store.checkpoint(label="second")
    store.rewind(first.id, finish_later=True)
    lock_path = str(store.root / "locks" / "rewind") + ".lock"  # as file_lock names it
    asked: list[float | None] = []
    real_poll = locks._poll

    def poll(lock: locks._Backend, fd: int, exclusive: bool, timeout: float | None,
             path: str) -> None:
        if path != lock_path:
            real_poll(lock, fd, exclusive, timeout, path)
            return
        asked.append(timeout)
        if not lock.try_lock(fd, exclusive):  # held: the wait's end, without the wait
            raise Conflict(f"another process has held the lock {path} for more than "
                           f"{timeout:g} s; try again when it is done")

    other = FileLock(lock_path, 1.0)  # another holder: a lock is per open file
    other.acquire()
    try:
        with mock.patch.object(locks, "_poll", poll):
            store.close()  # not raised: the rewind is left to the next open
    finally:
        other.release()
    assert asked and sum(t or 0.0 for t in asked) <= CLOSE_WAIT, asked
    assert store._unfinished is None
    assert store.oplog.pending() is not None  # left for the next open
    assert (ws / "a.txt").read_text() == "one"
    with Store.open(ws) as again:  # recorded once, nothing applied again
        assert [op.get("op") for op in again.oplog.all()] == ["rewind"]
        assert again.oplog.pending() is None
    assert (ws / "a.txt").read_text() == "one"
