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


def _contents(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("step", ["retention", "drop"])
def test_a_store_replaced_during_a_gc_gets_nothing_of_its_later_steps(
        tmp_path: Path, step: str) -> None:
    """Replaced after the gc's look at its start (a copy put at the path, after its
    retention's choice, or after its drop lines): the later steps (the drop lines, the
    caches forgotten, loose objects removed, the repack, stray temporaries) went by path
    into the copy. Each is now refused where the root is no longer the one opened
    (trust35): the copy is left as the swap made it."""
    from unittest import mock

    from turnback.store import gc
    from turnback.store.checkpoint_index import CheckpointIndex

    ws, store_dir, moved, _elsewhere = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        for i in range(3):
            (ws / "f.txt").write_text(f"v{i}\n")
            store.checkpoint(label=f"c{i}")
        store.objects.flush_held()
        at_swap: dict[str, bytes] = {}
        owner, name = (gc, "_retention") if step == "retention" else (CheckpointIndex, "drop")
        real = getattr(owner, name)

        def then_replaced(*a: object, **kw: object) -> object:
            out = real(*a, **kw)
            replace_store(store.root, moved, "a copy", moved)
            at_swap.update(_contents(store.root))
            return out

        with mock.patch.object(owner, name, then_replaced), \
                pytest.raises(TurnbackError, match="replaced"):
            store.gc(keep_last=1)
        assert at_swap
        assert _contents(store.root) == at_swap


@pytest.mark.parametrize("put", ["an empty folder", "a copy without locks/"])
def test_the_gc_lock_of_a_replaced_store_is_not_made_where_its_path_leads(
        tmp_path: Path, put: str) -> None:
    """The gc's lock was opened by path, its folder made if missing, before the look that
    refuses a replaced store: an empty ``locks/gc`` made in what the path led to. Now
    opened in ``locks/`` of the held root (trust35)."""
    ws, store_dir, moved, elsewhere = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        (ws / "f.txt").write_text("v\n")
        store.checkpoint(label="c")
        replace_store(store.root, moved, "an empty folder" if put == "an empty folder"
                      else "a copy", elsewhere)
        shutil.rmtree(store.root / "locks", ignore_errors=True)
        at_swap = _contents(store.root)
        with pytest.raises(TurnbackError, match="replaced"):
            store.gc(keep_last=1)
        assert not (store.root / "locks").exists()
        assert _contents(store.root) == at_swap
