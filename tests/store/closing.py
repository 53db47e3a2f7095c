"""``Store.close`` on a thread of its own, for the tests of a close that meets other work
(a checkpoint, a rewind left to finish): the thread, the close's error kept for the test's
assertions, and where the close's thread is now; and a close while another holder has the
rewind lock, its waits read instead of waited out."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from unittest import mock

from turnback import Store
from turnback.errors import Conflict
from turnback.fs import locks
from turnback.fs.locks import FileLock


@dataclass
class Closing:
    """A close not started yet: the test starts ``thread`` where its hook wants the close."""

    thread: threading.Thread
    errors: list[BaseException]  # what the close raised
    done: threading.Event  # set once the close ended, whichever way


def close_in_a_thread(store: Store) -> Closing:
    """``store.close()`` on a new thread (not started) that keeps what it raises."""
    errors: list[BaseException] = []
    done = threading.Event()

    def close() -> None:
        try:
            store.close()
        except BaseException as exc:  # reported by the test's assertion
            errors.append(exc)
        finally:
            done.set()

    return Closing(threading.Thread(target=close), errors, done)


def in_function(thread: threading.Thread, name: str) -> bool:
    """Whether ``thread`` is now inside a function called ``name`` (at any depth).

    The collector is off while the frames are taken: CPython 3.11's
    ``sys._current_frames`` allocates while it holds the runtime's list of threads, and a
    collection started there waited for that same lock, for ever, with the GIL held (seen
    in ``test_close_during_finish_rewind.py`` under load: the looking thread in
    ``gc_collect_main`` under ``_PyThread_CurrentFrames``, every other one waiting for the
    GIL; the hang ``redteam46`` saw once)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        frames = sys._current_frames()
    finally:
        if collecting:
            gc.enable()
    frame = frames.get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


def wait_until(cond: Callable[[], bool], what: str, tries: int) -> None:
    """Wait for ``cond``, 10 ms between looks; ``tries`` bounds a broken run only."""
    pause = threading.Event()
    for _ in range(tries):
        if cond():
            return
        pause.wait(0.01)
    raise AssertionError(what)


def close_with_the_rewind_lock_held(store: Store) -> list[float | None]:
    """``store.close()`` while another holder has the store's rewind lock, the lock's poll
    made to give up at once instead of waiting (no timing in the test): the waits, in
    seconds, the close asked that lock for. What the close raises is raised."""
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
            store.close()
    finally:
        other.release()
    return asked
