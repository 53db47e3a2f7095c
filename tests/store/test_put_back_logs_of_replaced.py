"""Records put back from the object logs of a store other than the one opened.

``CheckpointIndex.restore`` reads the logs (and ``checkpoints.jsonl``) by path, and since
``trust34`` appends what it puts back through the held root. A ``--store`` store replaced
before the logs' read (another store, with a record its listing lost, moved to its path)
got that other store's record in the held root's ``checkpoints.jsonl``: a record naming a
tree the opened store lacks. The root is now looked at again after the logs' read, before
anything is put back (``StoreState._held_for_put_back``): a replaced store is refused
(``Conflict``), nothing appended, the record left in its log for its own store's open.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import Conflict
from turnback.store import state


def _other_store_with_a_lost_line(tmp_path: Path) -> tuple[Path, str]:
    """Another workspace's store whose last record's line a crash took (its log frame
    kept): (its folder, that record's id)."""
    ws = tmp_path / "other-ws"
    ws.mkdir()
    (ws / "g.txt").write_text("other\n")
    other = tmp_path / "other-store"
    with Store.open(ws, store_dir=other) as store:
        store.checkpoint(label="other first")
        (ws / "g.txt").write_text("other two\n")
        lost = store.checkpoint(label="other lost").id
    index = other / "checkpoints.jsonl"
    index.write_bytes(index.read_bytes().splitlines(keepends=True)[0])
    return other, lost


def test_no_record_of_another_store_put_back_in_the_one_opened(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store"
    moved = tmp_path / "moved"
    other, lost = _other_store_with_a_lost_line(tmp_path)
    real = state.logged_records

    def swapped_then_read(*a: Any, **kw: Any) -> Any:
        if not moved.exists():  # the other store moved in before the logs' read
            os.rename(store_dir, moved)
            os.rename(other, store_dir)
        return real(*a, **kw)

    with Store.open(ws, store_dir=store_dir) as store:
        first = store.checkpoint(label="first").id
        with mock.patch.object(state, "logged_records", swapped_then_read), \
                pytest.raises(Conflict, match="replaced"):
            store.restore_records()
    lines = (moved / "checkpoints.jsonl").read_bytes().splitlines()
    assert len(lines) == 1 and first.encode() in lines[0]
    assert lost.encode() not in (moved / "checkpoints.jsonl").read_bytes()
    # left to the other store's own open, which puts it back there
    os.rename(store_dir, other)
    with Store.open(tmp_path / "other-ws", store_dir=other) as again:
        assert again.checkpoints()[-1].id == lost
