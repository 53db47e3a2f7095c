"""Two writes of a checkpoint's store that went by path before the root's look, or with
no look at all: ``checkpoint_now``'s look at its session's lock, and the records put back
into ``checkpoints.jsonl`` from the object logs (``CheckpointIndex.restore``).

``checkpoint_now`` asks whether the session's lock is free before its scan, and the root
is looked at after the scan: in a ``--store`` store replaced before the call, the look
made ``sessions/`` and ``sessions/workspace.jsonl.lock`` in what was put there (a link's
target). It now opens the lock in the held root's ``sessions/`` (``RecordFolders``, kept
for the record and event). A record put back was appended by path: a store replaced
between the logs' read and the append got the moved store's record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.fs.osflags import DESCRIPTORS
from turnback.store import checkpoint_index

from .swap_setup import replace_store


def _store(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return ws, tmp_path / "named-store", tmp_path / "moved", elsewhere


@pytest.mark.parametrize("put", ["a link", "an empty folder"])
def test_at_once_lock_look_makes_nothing_where_the_path_leads(tmp_path: Path,
                                                              put: str) -> None:
    ws, store_dir, moved, elsewhere = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        replace_store(store.root, moved, put, elsewhere)
        target = elsewhere if put == "a link" else store.root
        try:  # refused at the root's look; by path, declined at the lock's (None)
            assert store.checkpoint_now({"f.txt"}, label="second") is None
        except TurnbackError as exc:
            assert "replaced" in str(exc)
        assert not (target / "sessions").exists()
        assert len((moved / "checkpoints.jsonl").read_bytes().splitlines()) == 1


@pytest.mark.parametrize("put", ["a link", "an empty folder"])
def test_a_record_put_back_goes_into_the_store_its_log_is_in(tmp_path: Path,
                                                             put: str) -> None:
    """A record whose line a crash lost, put back from its log frame: the store replaced
    after the logs were read, before the line's append."""
    ws, store_dir, moved, elsewhere = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        lost = store.checkpoint(label="lost").id
        index = store.root / "checkpoints.jsonl"
        index.write_bytes(index.read_bytes().splitlines(keepends=True)[0])  # a crash
        real = checkpoint_index.append_lines

        def replaced_then_appended(*a: Any, **kw: Any) -> None:
            replace_store(store.root, moved, put, elsewhere)
            real(*a, **kw)

        with mock.patch.object(checkpoint_index, "append_lines", replaced_then_appended):
            try:
                store.restore_records()
            except TurnbackError:  # by path: the lock refused in a replaced folder
                pass
        target = elsewhere if put == "a link" else store.root
        assert not (target / "checkpoints.jsonl").exists()
        lines = (moved / "checkpoints.jsonl").read_bytes().splitlines()
        if DESCRIPTORS:  # put back into the store the log is in
            assert len(lines) == 2 and lost.encode() in lines[-1]
        else:  # by path: refused (the path leads elsewhere), put back at its next open
            assert len(lines) == 1

