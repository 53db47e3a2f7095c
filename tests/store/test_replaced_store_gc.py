"""A gc of a store replaced under its process is refused (``store/gc.py``), as a
checkpoint is: it reached the store by path throughout (its listing, the drop lines,
the objects removed) while this process's caches were the moved store's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError

from .swap_setup import replace_store


def _store(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return ws, tmp_path / "named-store", tmp_path / "moved", elsewhere


@pytest.mark.parametrize("put", ["a copy", "a link"])
def test_a_gc_of_a_replaced_store_is_refused(tmp_path: Path, put: str) -> None:
    """A gc reaches its store by path (the listing, the drop lines, the objects it
    removes) with this process's caches of the moved store: it collected what was put
    there (a copy's checkpoints dropped, its objects removed, by another store's
    reading). Refused at its start, as a checkpoint is."""
    ws, store_dir, moved, elsewhere = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        for i in range(3):
            (ws / "f.txt").write_text(f"v{i}\n")
            store.checkpoint(label=f"c{i}")
        if put == "a link":  # to a copy of the store, which the gc must not touch
            elsewhere.rmdir()
            shutil.copytree(store.root, elsewhere, symlinks=True)
        replace_store(store.root, moved, put, elsewhere)
        there = store.root / "checkpoints.jsonl"
        before = there.read_bytes()
        with pytest.raises(TurnbackError, match="replaced"):
            store.gc(keep_last=1)
        assert there.read_bytes() == before
        assert b'"drop"' not in (moved / "checkpoints.jsonl").read_bytes()
