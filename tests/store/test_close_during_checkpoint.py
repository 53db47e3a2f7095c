"""``Store.close`` from another thread while a checkpoint runs (a server closing a store at
shutdown or at a workspace folder's removal while its pool commits; branch junk33).

Made deterministic by a hook on ``os.dup``: when the checkpoint's record takes its ``dup`` of
the held store root, another thread closes the store and a folder of the user's is opened,
taking the lowest free descriptor number. Before, the close ran at once: the held root's
number was freed, the user's folder got it, and the ``dup`` took that folder for the
checkpoint's record (``checkpoints.jsonl`` and its lock written there). After, the close waits
for the checkpoint to end, and what is asked of the store later is refused."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from unittest import mock

import pytest

from turnback import Conflict, Store
from turnback.fs.osflags import DESCRIPTORS

from .closing import close_in_a_thread, in_function, wait_until

pytestmark = pytest.mark.skipif(
    not DESCRIPTORS, reason="folders by path hold no descriptor to dup (fs/folders.py)")


def _blocked_in_close_or_done(closer: threading.Thread, done: threading.Event) -> bool:
    """Whether ``closer`` has finished its close, or waits to take the store's mutex."""
    return done.is_set() or in_function(closer, "closing")


def test_a_close_during_a_checkpoint_waits_and_the_record_stays_in_the_store(
        ws: Path, tmp_path: Path) -> None:
    victim = tmp_path / "users-folder"
    victim.mkdir()
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    store.checkpoint(label="first")
    held_fd = store._root_held._fd
    assert held_fd is not None
    closing = close_in_a_thread(store)
    closer, errors, done = closing.thread, closing.errors, closing.done
    opened: list[int] = []
    real_dup = os.dup

    def dup(fd: int) -> int:
        if fd == held_fd and not opened and threading.current_thread() is not closer:
            closer.start()
            # at most ~20 s, only when the close neither ends nor waits
            wait_until(lambda: _blocked_in_close_or_done(closer, done),
                       "the close neither ended nor waited for the store's mutex", 2000)
            # other threads' opens take the lowest free numbers: the held root's among
            # them if the close let it go (and the object log's, lower, first)
            for _ in range(8):
                opened.append(os.open(victim, os.O_RDONLY | os.O_DIRECTORY))
                if opened[-1] == held_fd:
                    break
        return real_dup(fd)

    (ws / "a.txt").write_text("two")
    try:
        with mock.patch.object(os, "dup", dup):
            cp = store.checkpoint(label="second")
    finally:
        closer.join(30)
        for fd in opened:
            os.close(fd)
    assert opened, "the hook did not run: the record took no dup of the held root"
    assert not closer.is_alive() and not errors
    assert sorted(p.name for p in victim.iterdir()) == []  # nothing written in the user's
    with Store.open(ws) as again:
        assert [c.label for c in again.checkpoints()] == ["first", "second"]
        assert again.checkpoints()[-1].id == cp.id
    with pytest.raises(Conflict, match="was closed"):
        store.checkpoint(label="after the close")
