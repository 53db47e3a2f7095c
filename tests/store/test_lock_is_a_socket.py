"""A socket planted at a lock file's name (``checkpoints.jsonl.lock``, ``locks/gc``,
``sessions/<id>.jsonl.lock``). Before, the lock's ``open`` failed with a bare ``OSError``
("[Errno 6] No such device or address"), answered by the server as an internal error
(-32603; trust33's open item). It is now ``LockNotAFile`` (a ``StoreDamaged``): the full
path, "a socket, not a lock file", and to move it; once it is gone the command works. A FIFO
there opens (``O_NONBLOCK``: never waits for a writer) and is locked as a file is. The
server's case is tests/server/test_errors.py."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged
from turnback.fs.locks import LockNotAFile

from .lock_setup import LOCKS, store_with_a_checkpoint


def plant_socket(at: Path, monkeypatch: pytest.MonkeyPatch) -> socket.socket:
    """A bound Unix socket at ``at`` (bound by its name from its folder: a socket's path is
    at most 108 bytes); the caller closes it."""
    at.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with monkeypatch.context() as here:
        here.chdir(at.parent)
        sock.bind(at.name)
    return sock


@pytest.mark.parametrize("named", [False, True], ids=["own-store", "named-store"])
@pytest.mark.parametrize("lock", LOCKS)
def test_a_socket_at_a_lock_is_named_with_what_to_do(
        tmp_path: Path, lock: str, named: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, where = store_with_a_checkpoint(tmp_path, named)
    with Store.open(ws, **where) as store:
        at = store.root / lock
        sock = plant_socket(at, monkeypatch)
        try:
            (ws / "f.txt").write_text("two\n")
            with pytest.raises(LockNotAFile) as got:
                store.checkpoint(label="second")
            text = str(got.value)
            assert text.startswith(f"{at} is a socket, not a lock file"), text
            assert "Move it out of the way" in text, text
            assert isinstance(got.value, StoreDamaged) and isinstance(got.value, OSError)
            recorded = [c.label for c in store.checkpoints()]
            assert recorded == (["first", "second"] if lock.startswith("sessions/")
                                else ["first"])
        finally:
            sock.close()
        at.unlink()
        (ws / "f.txt").write_text("three\n")
        store.checkpoint(label="third")  # the lock file made again
        assert [c.label for c in store.checkpoints()] == [*recorded, "third"]


@pytest.mark.parametrize("lock", LOCKS)
def test_a_fifo_at_a_lock_is_opened_without_waiting_and_locked(tmp_path: Path,
                                                               lock: str) -> None:
    """Decided, not refused: a FIFO opens at once and its lock excludes as a file's."""
    ws, where = store_with_a_checkpoint(tmp_path, True)
    with Store.open(ws, **where) as store:
        at = store.root / lock
        at.unlink(missing_ok=True)
        os.mkfifo(at)
        (ws / "f.txt").write_text("two\n")
        store.checkpoint(label="second")
        assert [c.label for c in store.checkpoints()] == ["first", "second"]
