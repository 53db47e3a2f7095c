"""A store named with ``--store`` replaced between the look at its root and its record.

``_checkpoint_held`` looks at the root (``HeldFolder.replaced``) after the scan, then
commits: the object log's frame goes through the log's held descriptor, but
``checkpoints.jsonl`` was opened by its path ~11 system calls later. A store moved away in
that window, with a link or an empty folder put at its path, got the checkpoint's record
line in what was put there (redteam38's open item). The record now goes through the held
root (``HeldFolder.folder``): into the store that was looked at, wherever it went. The
swap is made inside ``ObjectStore.commit``, the step between the look and the record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.fs.osflags import DESCRIPTORS
from turnback.objects.objectstore import ObjectStore

from .swap_setup import one_checkpoint_then_an_edit, put_back, replaced_after


def _records_in(root: Path) -> list[Path]:
    """Every ``checkpoints.jsonl`` at or below ``root`` (a link followed: what it names)."""
    if not root.exists():
        return []
    return sorted(p for p in root.rglob("checkpoints.jsonl"))


@pytest.mark.parametrize("put", ["a link", "an empty folder"])
def test_a_store_replaced_after_the_look_gets_no_record(tmp_path: Path, put: str) -> None:
    with one_checkpoint_then_an_edit(tmp_path) as (store, at):
        root, moved = store.root, at.moved
        # after the look, before the record
        with replaced_after(ObjectStore, "commit", root, moved, put, at.elsewhere):
            try:
                cp_id: str | None = store.checkpoint(label="second").id
            except TurnbackError:  # its session event, after the record, finds no session
                cp_id = None  # file at the path (NotFound): the record stands
        # nothing of the record in what was put at the store's path
        assert _records_in(at.elsewhere) == [] and _records_in(root) == []
        lines = (moved / "checkpoints.jsonl").read_bytes().splitlines()
        if DESCRIPTORS:  # the record is in the store that was looked at, where it went
            assert len(lines) == 2 and b'"second"' in lines[1]
            assert cp_id is None or cp_id.encode() in lines[1]
        else:  # folders by path (Windows): refused at the path's look, left in the log
            assert len(lines) == 1 and cp_id is None
    put_back(root, moved)
    with Store.open(at.ws, store_dir=at.store_dir) as store:  # by path: put back from the log
        assert [c.label for c in store.checkpoints()] == ["first", "second"]
        assert store.fsck().ok
