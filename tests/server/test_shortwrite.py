"""A small checkpoint asked at once runs on the event loop itself (``shortwrite.py``); every
other case goes to the writes pool as before, with nothing done on the loop."""

from __future__ import annotations

import asyncio
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback.models import Checkpoint
from turnback.server.core import TurnbackServer
from turnback.server.features.checkpoints import take_checkpoint, take_checkpoint_now
from turnback.server.jobs import shortwrite
from turnback.server.watching import inotify_watch
from turnback.server.watching.dirty import DirtyTracker, Ticket
from turnback.server.workspace.folders import Folder, with_dirty
from turnback.server.workspace.settings import Settings
from turnback.store.facade import Store

Result = tuple[Checkpoint, Ticket]


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    """A folder watched by inotify, its store open, the set trusted (after a walk)."""
    if not inotify_watch.available():
        pytest.skip("no inotify on this system")
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(40):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    f = Folder(ws.as_uri(), ws, Settings())
    store = f.open_store(create=True)
    assert store is not None
    f.start_watcher(lambda sessions, checkpoints: None)
    try:
        assert f.watcher is not None and f.watcher.wait_ready(10)
        with_dirty(f, lambda dirty: store.checkpoint(dirty=dirty))  # the walk: trusted now
        assert f.tracker.count == 0
        # The watcher's thread drains every 50 ms; caught in a drain, a write goes to the
        # pool, as it should, and which way a test's write went would depend on that
        # thread's timing. Here only the test's own thread (the loop's flush) drains.
        drain, loop = f.watcher.drain, threading.get_ident()
        f.watcher.drain = lambda: drain() if threading.get_ident() == loop else False  # type: ignore[method-assign]
        yield f
    finally:
        f.stop_watcher()
        f.close_store()


def _edit(folder: Folder, n: int) -> set[str]:
    names = {f"f{i}.txt" for i in range(n)}
    for name in names:
        (folder.path / name).write_text("changed at once\n")
    return names


class Where:
    """Which thread ran the write: the loop's (``short``) or the pool's (``fn``)."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        self.ran: list[str] = []
        self.loop = threading.get_ident()

    def fn(self, store: Store) -> Result:
        assert threading.get_ident() != self.loop
        self.ran.append("pool")
        return take_checkpoint(self.folder, store, label=None, session_id=None, auto=False,
                               work=None)

    def short(self, store: Store) -> Result | None:
        assert threading.get_ident() == self.loop
        got = take_checkpoint_now(self.folder, store, label=None, session_id=None, auto=False)
        self.ran.append("loop" if got is not None else "loop: declined")
        return got


async def _write(folder: Folder, where: Where, cancel: threading.Event | None = None
                 ) -> Result:
    ls = TurnbackServer()
    try:
        where.loop = threading.get_ident()
        result = await ls.write(folder, where.fn, short=where.short, cancel=cancel,
                                after=Store.save_scan_cache)
        await folder.write_lock.acquire()  # until the after-work let it go
        folder.write_lock.release()
        return result
    finally:
        ls.pools.shutdown()


async def test_a_small_checkpoint_at_once_runs_on_the_loop(folder: Folder) -> None:
    changed = _edit(folder, 10)
    where = Where(folder)
    cp, ticket = await _write(folder, where)
    assert where.ran == ["loop"]
    assert ticket.paths is not None and changed <= ticket.paths
    store = folder.store
    assert store is not None
    assert store.file_content(cp.id, "f3.txt").text == "changed at once\n"
    assert folder.tracker.count == 0


async def test_many_changed_paths_go_to_the_pool(folder: Folder) -> None:
    _edit(folder, shortwrite.SHORT_PATHS + 1)
    where = Where(folder)
    cp, ticket = await _write(folder, where)
    assert where.ran in (["pool"], ["loop: declined", "pool"])
    assert ticket.paths is not None and len(ticket.paths) > shortwrite.SHORT_PATHS
    assert folder.store is not None
    assert folder.store.file_content(cp.id, "f32.txt").text == "changed at once\n"


async def test_a_cancellable_request_goes_to_the_pool(folder: Folder) -> None:
    _edit(folder, 2)
    where = Where(folder)
    await _write(folder, where, cancel=threading.Event())
    assert where.ran == ["pool"]


async def test_another_write_of_the_folder_running_sends_it_to_the_pool(
    folder: Folder,
) -> None:
    _edit(folder, 2)
    where = Where(folder)
    await folder.write_lock.acquire()
    task = asyncio.get_running_loop().create_task(_write(folder, where))
    await asyncio.sleep(0)  # the write looked at the lock and waits for it
    folder.write_lock.release()
    await task
    assert where.ran == ["pool"]


async def test_the_gc_lock_held_elsewhere_sends_it_to_the_pool_paths_kept(
    folder: Folder,
) -> None:
    """The loop never waits for another process: the store declines, the paths go back to
    the tracker, and the pool's write (which may wait) takes them."""
    changed = _edit(folder, 3)
    store = folder.store
    assert store is not None
    fd = os.open(store.root / "locks" / "gc", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another open file description: as another process

    def release_when_pooled() -> None:
        # the pool's checkpoint waits for the lock: let it go once the loop declined
        deadline = time.monotonic() + 10
        while "loop: declined" not in where.ran and time.monotonic() < deadline:
            time.sleep(0.005)
        os.close(fd)

    where = Where(folder)
    releaser = threading.Thread(target=release_when_pooled)
    releaser.start()
    try:
        cp, ticket = await _write(folder, where)
    finally:
        releaser.join(10)
    assert where.ran == ["loop: declined", "pool"]
    assert ticket.paths is not None and changed <= ticket.paths
    assert store.file_content(cp.id, "f2.txt").text == "changed at once\n"


async def test_a_failure_on_the_loop_is_answered_as_on_the_pool(folder: Folder) -> None:
    """An unknown session: the same error; the paths go back to the tracker."""
    changed = _edit(folder, 2)
    ls = TurnbackServer()
    loop = threading.get_ident()
    ran: list[int] = []

    def short(store: Store) -> Result | None:
        ran.append(threading.get_ident())
        return take_checkpoint_now(folder, store, label=None, session_id="no-such-session",
                                   auto=False)

    try:
        with pytest.raises(Exception, match="no-such-session"):
            await ls.write(folder, lambda store: pytest.fail("the pool ran it"), short=short)
    finally:
        ls.pools.shutdown()
    assert ran == [loop]
    assert folder.watcher is not None and folder.watcher.flush()
    assert folder.tracker.take().paths == frozenset(changed)


async def test_events_lost_make_the_pool_walk(folder: Folder) -> None:
    """A queue overflow found by the loop's flush: no walk on the loop; the pool walks."""
    from inotify_simple import Event

    _edit(folder, 2)
    watcher = folder.watcher
    assert isinstance(watcher, inotify_watch.InotifyWatcher)
    ino = watcher._ino
    assert ino is not None
    real = ino.read
    loop = threading.get_ident()

    def read(timeout: float | None = None) -> list[Event]:
        # lost on the loop's flush only: the watcher's own thread reads on as before
        lost = [Event(-1, 0x4000, 0, "")] if threading.get_ident() == loop else []
        return [*lost, *real(timeout=timeout)]

    ino.read = read  # type: ignore[method-assign]
    where = Where(folder)
    try:
        _cp, ticket = await _write(folder, where)
    finally:
        ino.read = real
    assert where.ran == ["loop: declined", "pool"]
    assert ticket.paths is None, "the pool's checkpoint walked"


class _Queue:
    """An inotify instance's stand-in: a pipe, whose unread bytes FIONREAD counts too."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()

    def fileno(self) -> int:
        return self.r

    def close(self) -> None:
        os.close(self.r)
        os.close(self.w)


def test_a_flush_is_short_only_with_few_bytes_queued_and_no_drain_under_way(
    tmp_path: Path,
) -> None:
    if not inotify_watch.available():
        pytest.skip("no inotify on this system")
    w = inotify_watch.InotifyWatcher(tmp_path, tmp_path / ".turnback", DirtyTracker(),
                                     lambda sessions, checkpoints: None)
    assert not w.drains_now(1 << 20), "not watching: a flush cannot tell"
    queue = _Queue()
    try:
        w._ino = queue  # type: ignore[assignment]
        w._ready.set()  # its thread not started: nothing drains but the test
        assert w.drains_now(0)
        os.write(queue.w, b"x" * 100)
        assert not w.drains_now(64)
        assert w.drains_now(128)
        with w._reporting:  # a drain under way on the watcher's thread: it would wait
            assert not w.drains_now(128)
        assert w.drains_now(128)
    finally:
        w._ino = None
        queue.close()
