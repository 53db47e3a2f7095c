"""``Store.close`` while another thread finishes a rewind left to finish later (a server:
``finish_rewind`` on its writes pool right after a rewind's answer; ``close_all`` on the
event loop at ``shutdown``; branch redteam42).

A rewind's finish takes the rewind lock (a file lock), then the store's mutex. Since junk33
``close`` held the mutex first and, finding the rewind unfinished, then waited for the rewind
lock: the two orders met, the finishing thread waited for the mutex and the close for the
lock, until the lock's 30 s ran out (on the server's event loop), the close failed and the
rewind was left to the next open. Made to happen every time by a hook on ``FileLock.acquire``:
once the finishing thread holds the rewind lock it waits until the close waits for that lock
(``_poll`` on the close's thread), then goes on to the mutex. The close's wait is cut to 3 s
here so that the test ends quickly before the fix; after it, the close never waits there
while holding the mutex."""

from __future__ import annotations

import threading
from pathlib import Path
from unittest import mock

from turnback import Store
from turnback.fs.locks import FileLock

from .closing import close_in_a_thread, in_function, wait_until


def test_a_close_while_a_rewind_is_finished_neither_waits_on_the_lock_nor_fails(
        ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    first = store.checkpoint(label="first")
    (ws / "a.txt").write_text("two")
    store.checkpoint(label="second")
    store.rewind(first.id, finish_later=True)  # as the server does: recorded after the answer
    assert store._unfinished is not None

    closing = close_in_a_thread(store)
    closer, errors, closed = closing.thread, closing.errors, closing.done
    finisher_errors: list[BaseException] = []

    def finish() -> None:
        try:
            store.finish_rewind()
        except BaseException as exc:
            finisher_errors.append(exc)

    finisher = threading.Thread(target=finish)
    real_acquire = FileLock.acquire

    def acquire(self: FileLock) -> None:
        if threading.current_thread() is closer:
            self.timeout = 3.0  # before the fix this wait is the deadlock's only way out
        real_acquire(self)
        if threading.current_thread() is finisher and self.path.endswith("rewind.lock"):
            closer.start()
            # a bound for a broken run only: the condition is what is waited for
            wait_until(lambda: closed.is_set() or in_function(closer, "_poll"),
                       "the close neither ended nor waited for the rewind lock", 3000)

    with mock.patch.object(FileLock, "acquire", acquire):
        finisher.start()
        finisher.join(60)
        closer.join(60)
    assert not finisher.is_alive() and not closer.is_alive()
    assert errors == [] and finisher_errors == []
    with Store.open(ws) as again:  # the rewind recorded once, by this process, not recovered
        ops = [op for op in again.oplog.all() if op.get("op") == "rewind"]
        assert len(ops) == 1
        assert (ws / "a.txt").read_text() == "one"


def test_a_close_alone_finishes_the_rewind_left_to_finish(ws: Path) -> None:
    # the close finishes it before taking the mutex: one rewind lock at a time, not its own
    # second one (a lock is per open file: a second open of it in one thread waits 30 s)
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    first = store.checkpoint(label="first")
    (ws / "a.txt").write_text("two")
    store.checkpoint(label="second")
    store.rewind(first.id, finish_later=True)
    store.close()
    assert store._unfinished is None
    with Store.open(ws) as again:
        assert [op.get("op") for op in again.oplog.all()] == ["rewind"]
