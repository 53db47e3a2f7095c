"""A socket planted at one of the store's files (``oplog.jsonl``, ``checkpoints.jsonl``).

``trust35`` named a socket at a lock's name (``LockNotAFile``), but one at a file the store
reads or appends to still failed its ``open`` with a bare ``OSError`` ("[Errno 6] No such
device or address"), answered -32603 by the server. At ``oplog.jsonl`` a rewind's record
failed so after its files were in place, and every later open of the store, whose journal
was then pending, failed the same way: the workspace's store did not open at all, with no
word of what to move. Now it is ``NotRegular`` (a ``StoreDamaged``) naming the path and "a
socket", as a FIFO there was; once it is moved away the next open records the rewind.
Since ``trust36`` the store opens meanwhile (``test_op_log_not_a_file_at_open.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged
from turnback.fs.reading import NotRegular

from .test_lock_is_a_socket import plant_socket


def test_a_socket_at_the_op_log_is_named_and_the_rewind_recorded_once_it_is_gone(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
        store.checkpoint(label="second")
        oplog = store.oplog.path
        sock = plant_socket(oplog, monkeypatch)
        try:
            with pytest.raises(NotRegular, match=r"oplog\.jsonl is a socket"):
                store.rewind(first.id)  # before: OSError, [Errno 6]
        finally:
            sock.close()
    assert (ws / "a.txt").read_text() == "one"  # its files were in place
    # its journal pending: the open's recovery waits for the log, reads work and writes
    # are refused by name (trust36; the open itself was refused, StoreDamaged)
    with Store.open(ws) as store:
        assert [cp.label for cp in store.checkpoints()][:2] == ["first", "second"]
        with pytest.raises(StoreDamaged, match=r"oplog\.jsonl is a socket.*Move it"):
            store.checkpoint(label="refused")
    oplog.unlink()
    with Store.open(ws) as store:  # recorded once, nothing applied again
        assert [op.get("op") for op in store.oplog.all()] == ["rewind"]
        assert store.oplog.pending() is None
    assert (ws / "a.txt").read_text() == "one"


def test_a_socket_at_the_checkpoint_list_is_named(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
        sock = plant_socket(store.index.path, monkeypatch)
        try:
            (ws / "a.txt").write_text("two")
            with pytest.raises(NotRegular, match=r"checkpoints\.jsonl is a socket"):
                store.checkpoint(label="second")
        finally:
            sock.close()
