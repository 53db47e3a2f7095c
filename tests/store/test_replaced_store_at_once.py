"""A store named with ``--store`` replaced during an at-once checkpoint's scan is refused.

``Store.checkpoint_now`` (the server's checkpoint, and the at-once path) looked at the
store's root before its scan only. A store named with ``--store`` is written by path: one
renamed away during the scan, with a link to a folder outside or an empty folder put in its
place, took the checkpoint's record into what was put there when the scan met no missing
object (its trees warm in memory, its changed file new content). The full checkpoint looks
again before its commit since ``trust28``; ``trust29`` makes ``checkpoint_now`` do the same.
The race is made deterministic by doing the swap inside the scan (``Scanner.scan``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError

from .swap_setup import files_below, put_back, replaced_at_scan, three_files_and_a_folder


@pytest.mark.parametrize("put", ["a link", "an empty folder", "nothing"])
def test_a_named_store_swapped_in_an_at_once_scan_is_refused(tmp_path: Path, put: str) -> None:
    ws, elsewhere = three_files_and_a_folder(tmp_path)
    store_dir = tmp_path / "named-store"
    with Store.open(ws, store_dir=store_dir) as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        store.warm_trees()  # as a server does while quiet: the scan reads no tree
        (ws / "f1.txt").write_text("new content, in no object yet\n")
        root, moved = store.root, tmp_path / "moved"
        with replaced_at_scan(root, moved, put, elsewhere), pytest.raises(TurnbackError) as got:
            store.checkpoint_now({"f1.txt"})
        message = str(got.value)
        assert str(root) in message and "was replaced" in message, message
        assert "nothing was recorded" in message
        assert files_below(elsewhere) == [] and files_below(root) == []
    put_back(root, moved)
    with Store.open(ws, store_dir=store_dir) as store:
        assert [c.label for c in store.checkpoints()] == ["walk"]
        assert store.fsck().ok
