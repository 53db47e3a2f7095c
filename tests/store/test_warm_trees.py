"""A kept store's trees read into memory after a walk (``Store.warm_trees``, the server's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.objects.objectstore import TREE


def _workspace(ws: Path) -> None:
    for i in range(4):
        for j in range(3):
            d = ws / f"d{i}" / f"e{j}"
            d.mkdir(parents=True)
            for k in range(5):
                (d / f"f{k}.txt").write_text(f"{i} {j} {k}")


def test_after_a_walk_a_small_checkpoint_reads_no_tree_from_the_store(
    ws: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _workspace(ws)
    with Store.open(ws) as store:
        store.checkpoint()  # the first: it writes every tree
    with Store.open(ws) as store:
        walked = store.checkpoint()  # a walk that reuses every folder's record
        assert store.walked
        assert store.warm_trees() == 1 + 4 + 12  # every folder of the workspace
        assert not store.walked and store.warm_trees() == 0, "once per walk"
        reads: list[str] = []
        real_get = store.objects.get

        def get(kind: str, name: str) -> bytes:
            if kind == TREE:
                reads.append(name)
            return real_get(kind, name)

        monkeypatch.setattr(store.objects, "get", get)
        changed = ["d1/e2/f3.txt", "d3/e0/f0.txt", "d3/new.txt"]
        for p in changed:
            (ws / p).write_text("changed")
        cp = store.checkpoint(dirty=changed)
        assert reads == []
        monkeypatch.undo()
    with Store.open(ws) as fresh:  # what a walk of the same files makes
        assert fresh.checkpoint().tree == cp.tree != walked.tree


def test_without_a_walk_nothing_is_read(ws: Path) -> None:
    _workspace(ws)
    with Store.open(ws) as store:
        store.checkpoint()
        assert store.warm_trees() > 0
        (ws / "d0" / "e0" / "f0.txt").write_text("changed")
        store.checkpoint(dirty=["d0/e0/f0.txt"])  # incremental: no walk
        assert not store.walked and store.warm_trees() == 0


def test_a_damaged_tree_stops_the_warm_up_without_an_error(
    ws: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up reads the store, which is input: a tree that fails its checks ends it
    quietly (the checkpoint that needs that tree says what is wrong)."""
    _workspace(ws)
    with Store.open(ws) as store:
        store.checkpoint()
        real_get = store.objects.get

        def get(kind: str, name: str) -> bytes:
            if kind == TREE:
                return b"f not-a-hash 1 x\0"  # what a damaged pack could hold
            return real_get(kind, name)

        monkeypatch.setattr(store.objects, "get", get)
        assert store.warm_trees() == 0
        assert not store.walked


def test_at_once_rounds_after_the_tree_cache_filled_read_no_tree_back(
    ws: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server's rounds (a checkpoint, a rewind to it, the read-ahead) with its tree cache
    full: the superseded versions go, not the folders the next rewind diffs against.

    The read-ahead looks up the changed paths in the last checkpoint, after a rewind its
    safety checkpoint; had that look-up made the safety folders "in use again", they would
    stay and the rewind's target (the last checkpoint, replaced by the safety checkpoint)
    would go first: read back from the store by every rewind's diff."""
    import turnback.objects.trees as trees_mod

    _workspace(ws)
    files = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.txt"))
    with Store.open(ws) as store:
        store.checkpoint()
    # room for every folder of a walk and a few rounds' new versions, then full
    monkeypatch.setattr(trees_mod, "CACHE_ENTRIES", 260)  # the walk: 152
    reads: list[str] = []
    with Store.open(ws) as store:
        store.checkpoint()
        assert store.warm_trees() > 0
        real_get = store.objects.get

        def get(kind: str, name: str) -> bytes:
            if kind == TREE:
                reads.append(name)
            return real_get(kind, name)

        monkeypatch.setattr(store.objects, "get", get)
        for n in range(12):
            first = [files[(7 * n) % len(files)], files[(7 * n + 29) % len(files)]]
            for p in first:
                (ws / p).write_text(f"round {n}")
            cp = store.checkpoint(dirty=first)
            then = [files[(5 * n + 11) % len(files)], files[(5 * n + 41) % len(files)]]
            for p in then:
                (ws / p).write_text(f"then {n}")
            reads.clear()
            store.rewind(cp.id, dirty=then, finish_later=True)
            assert reads == [], f"round {n}: the rewind read {len(reads)} trees back"
            store.finish_rewind()
            assert store.prepare(then)
        assert store.trees.held > 200, "the cache filled"
