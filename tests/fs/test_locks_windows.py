"""The lock module's Windows path (``msvcrt.locking`` byte ranges), run here with a fake
``msvcrt`` that keeps Windows' rules: a byte locked through one handle cannot be locked
through another (of this process or any), ``LK_NBLCK`` fails at once with ``OSError``,
unlocking a range not held fails. Not run on Windows itself (said in README.md)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Conflict
from turnback.fs import locks
from wsutil import write


class FakeMsvcrt:
    LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4

    def __init__(self) -> None:
        self.held: dict[tuple[int, int, int], int] = {}  # (dev, ino, byte) -> fd

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        st = os.fstat(fd)
        pos = os.lseek(fd, 0, os.SEEK_CUR)
        keys = [(st.st_dev, st.st_ino, b) for b in range(pos, pos + nbytes)]
        if mode == self.LK_UNLCK:
            if any(self.held.get(k) != fd for k in keys):
                raise OSError(errno.EACCES, "unlocking a range not held")
            for k in keys:
                del self.held[k]
            return
        assert mode == self.LK_NBLCK, "Turnback only polls"
        if any(k in self.held for k in keys):  # any holder, this handle included
            raise OSError(errno.EACCES, "Permission denied")
        for k in keys:
            self.held[k] = fd


@pytest.fixture
def fake() -> Iterator[FakeMsvcrt]:
    m = FakeMsvcrt()
    saved = locks._backend
    locks._backend = locks._Ranges(m)  # type: ignore[arg-type]
    try:
        yield m
    finally:
        locks._backend = saved


def _fd(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def test_shared_holders_share_and_exclude_an_exclusive_one(tmp_path: Path,
                                                           fake: FakeMsvcrt) -> None:
    p = tmp_path / "objects.lock"
    with locks.rw_lock(p, exclusive=False), locks.rw_lock(p, exclusive=False):
        fd = _fd(p)
        try:
            assert not locks.backend().try_lock(fd, True)  # gc waits for the writers
            assert locks.backend().try_lock(fd, False) is True  # a third writer need not
            locks.backend().unlock(fd, False)
        finally:
            os.close(fd)
    fd = _fd(p)
    try:
        assert locks.backend().try_lock(fd, True)  # all gone: gc may run
        other = _fd(p)
        try:
            assert not locks.backend().try_lock(other, False)  # and no writer meanwhile
            assert not locks.backend().try_lock(other, True)
        finally:
            os.close(other)
        locks.backend().unlock(fd, True)
    finally:
        os.close(fd)
    assert fake.held == {}


def test_a_waiting_exclusive_holder_keeps_new_shared_ones_out(tmp_path: Path,
                                                              fake: FakeMsvcrt) -> None:
    """The gate byte: gc holding it while writers drain is not starved by new writers."""
    p = tmp_path / "objects.lock"
    gc_fd, writer = _fd(p), _fd(p)
    try:
        os.lseek(gc_fd, 0, os.SEEK_SET)
        fake.locking(gc_fd, fake.LK_NBLCK, 1)  # gc took the gate, waits for the slots
        assert not locks.backend().try_lock(writer, False)
        os.lseek(gc_fd, 0, os.SEEK_SET)
        fake.locking(gc_fd, fake.LK_UNLCK, 1)
        assert locks.backend().try_lock(writer, False)
        locks.backend().unlock(writer, False)
    finally:
        os.close(gc_fd)
        os.close(writer)


def test_every_slot_taken_is_a_wait_not_an_error(tmp_path: Path, fake: FakeMsvcrt) -> None:
    p = tmp_path / "objects.lock"
    fds = [_fd(p) for _ in range(locks.SLOTS + 1)]
    try:
        assert all(locks.backend().try_lock(fd, False) for fd in fds[:-1])
        assert not locks.backend().try_lock(fds[-1], False)
        locks.backend().unlock(fds[0], False)
        assert locks.backend().try_lock(fds[-1], False)
    finally:
        for fd in fds:
            os.close(fd)


def test_an_exclusive_file_lock_times_out_with_a_clear_error(tmp_path: Path,
                                                             fake: FakeMsvcrt) -> None:
    target = tmp_path / "a.jsonl"
    with locks.file_lock(target), pytest.raises(Conflict, match=r"a\.jsonl\.lock"):
        locks.file_lock(target, timeout=0.05).acquire()
    with locks.file_lock(target) as again:
        assert again.is_locked
    assert fake.held == {}


def test_the_store_works_on_the_windows_locks(ws: Path, fake: FakeMsvcrt) -> None:
    """Checkpoint (shared object lock, appends' exclusive locks), rewind and gc (exclusive)
    through the Windows path; every lock released at the end."""
    write(ws, "a.txt", "one\n")
    with Store.open(ws) as store:
        first = store.checkpoint()
        write(ws, "a.txt", "two\n")
        store.checkpoint()
        store.rewind(first.id)
        store.gc()
    assert (ws / "a.txt").read_text() == "one\n"
    assert fake.held == {}


def test_the_platform_picks_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    saved = locks._backend
    fake_module = types.ModuleType("msvcrt")
    monkeypatch.setitem(sys.modules, "msvcrt", fake_module)
    monkeypatch.setattr(sys, "platform", "win32")
    try:
        locks._backend = None
        assert isinstance(locks.backend(), locks._Ranges)
        monkeypatch.setattr(sys, "platform", "darwin")
        locks._backend = None
        assert isinstance(locks.backend(), locks._Flock)
    finally:
        locks._backend = saved
