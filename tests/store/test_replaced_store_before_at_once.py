"""A store named with ``--store`` replaced before an at-once checkpoint: nothing of the
workspace is written into what was put there (redteam38's pass over trust29: probed sound).

trust29 moved ``checkpoint_now``'s look at the store's root from before its scan to after
it, before the commit. Were the scan to write the changed files' new content into the
store (by path), a store replaced by a link to someone else's folder (a copy of the store
there, so that its locks and object folders exist) before the checkpoint would get that
content before the refusal. It does not: the content is written at the commit, after the
look (an object log holds it raw, as ``_holds`` finds in the store after a checkpoint).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError

from .swap_setup import put_back

SECRET = os.urandom(256)  # no compression shrinks it: an object log holds it raw


def _holds(root: Path, data: bytes) -> list[str]:
    """Files under ``root`` whose bytes hold ``data`` (random bytes: stored raw)."""
    return [str(p) for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


@pytest.mark.parametrize("put", ["a link to a copy", "a copy"])
def test_a_named_store_replaced_before_an_at_once_checkpoint_gets_nothing(
        tmp_path: Path, put: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    store_dir = tmp_path / "named-store"
    elsewhere = tmp_path / "elsewhere"
    moved = tmp_path / "moved"
    with Store.open(ws, store_dir=store_dir) as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        store.warm_trees()
        root = store.root
        (ws / "f1.txt").write_bytes(SECRET)
        shutil.copytree(root, elsewhere, symlinks=True)  # someone else's, shaped as a store
        os.rename(root, moved)
        if put == "a link to a copy":
            os.symlink(elsewhere, root)
        else:
            os.rename(elsewhere, root)
            elsewhere = root
        with pytest.raises(TurnbackError) as got:
            store.checkpoint_now({"f1.txt"})
        assert "was replaced" in str(got.value), got.value
        assert _holds(elsewhere, SECRET) == []  # written there before the refusal, before
    shutil.rmtree(elsewhere, ignore_errors=True)  # the copy (at the path itself, or linked)
    put_back(root, moved)
    with Store.open(ws, store_dir=store_dir) as store:
        assert [c.label for c in store.checkpoints()] == ["walk"]
        assert store.fsck().ok
        store.checkpoint(label="here")
    assert _holds(root, SECRET)  # the look above could find it: it is there once written


def test_a_named_store_reached_through_a_linked_parent_is_not_taken_for_replaced(
        tmp_path: Path) -> None:
    """The root look compares what the path leads to (``os.stat``, links followed) with the
    folder held: a parent reached by a link is the same folder, no false "replaced"."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("f1\n")
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "via")
    with Store.open(ws, store_dir=tmp_path / "via" / "store") as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        store.warm_trees()
        (ws / "f.txt").write_bytes(SECRET)
        cp = store.checkpoint_now({"f.txt"})
        assert cp is not None and store.read_file(cp.id, "f.txt") == SECRET
    assert _holds(tmp_path / "real" / "store", SECRET)
