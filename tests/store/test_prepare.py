"""Store.prepare: reading a watcher's changed paths ahead of the next checkpoint."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from snapshot.test_incremental import _edit
from turnback import Store


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for i in range(20):
        p = ws / f"d{i % 3}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"file {i}\n")
    (ws / ".gitignore").write_text("build/\n")
    return ws


def test_prepare_without_a_previous_scan_reads_nothing(tmp_path: Path) -> None:
    store = Store.open(_workspace(tmp_path))
    assert store.prepare({"d0/f0.txt"}) is False
    assert store.checkpoints() == []


def test_checkpoint_after_prepare_commits_the_prepared_tree(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    first = store.checkpoint(dirty=set())
    (ws / "d0" / "f0.txt").write_text("changed\n")
    (ws / "d1" / "new.txt").write_text("new\n")
    (ws / "d2" / "f2.txt").unlink()
    assert store.prepare({"d0/f0.txt", "d1/new.txt", "d2/f2.txt"}) is True
    assert store.checkpoints() == [first], "prepare makes no checkpoint"
    cp = store.checkpoint(dirty=set())  # nothing changed since the preparation
    assert cp.tree == store.scanner.scan(write=False).tree
    assert store.read_file(cp.id, "d0/f0.txt") == b"changed\n"
    assert store.read_file(cp.id, "d1/new.txt") == b"new\n"
    assert store.read_file(cp.id, "d2/f2.txt") is None
    assert {c.path: c.status for c in store.changes(first.id, cp.id)} == {
        "d0/f0.txt": "modified", "d1/new.txt": "added", "d2/f2.txt": "deleted"}


def test_prepare_of_everything_walks_and_becomes_the_base(tmp_path: Path) -> None:
    """``prepare(None)``: what a background server does at start, with no scan of its own
    yet: a change made before it (no watcher saw it) is in the next checkpoint, read by
    the walk; one after it by the paths the watcher gives."""
    ws = _workspace(tmp_path)
    with Store.open(ws) as earlier:
        first = earlier.checkpoint()
    store = Store.open(ws)  # a new process: no scan to build on
    (ws / "d0" / "f0.txt").write_text("before the walk\n")
    assert store.prepare({"d0/f0.txt"}) is False
    assert store.prepare(None) is True
    assert store.checkpoints() == [first], "prepare makes no checkpoint"
    (ws / "d1" / "f1.txt").write_text("after the walk\n")
    cp = store.checkpoint(dirty={"d1/f1.txt"})
    assert store.read_file(cp.id, "d0/f0.txt") == b"before the walk\n"
    assert store.read_file(cp.id, "d1/f1.txt") == b"after the walk\n"
    assert cp.tree == store.scanner.scan(write=False).tree
    assert {c.path for c in store.changes(first.id, cp.id)} == {"d0/f0.txt", "d1/f1.txt"}
    store.close()


def test_prepare_of_everything_saves_the_cache_only_when_nothing_is_new(tmp_path: Path) -> None:
    """The walk's stat cache is saved when its tree is the last checkpoint's (it names only
    committed objects; the next fresh process keeps its folder records), never when the
    walk stored something no checkpoint holds yet."""
    ws = _workspace(tmp_path)
    with Store.open(ws) as earlier:
        earlier.checkpoint()
    cache = ws / ".turnback" / "cache" / "stat.bin"
    store = Store.open(ws)
    os.utime(cache, ns=(0, 0))
    assert store.prepare(None) is True
    assert cache.stat().st_mtime_ns != 0, "nothing new: saved"
    (ws / "d0" / "f0.txt").write_text("not in any checkpoint\n")
    os.utime(cache, ns=(0, 0))
    assert store.prepare(None) is True
    assert cache.stat().st_mtime_ns == 0, "a new blob: not saved before a commit"
    store.close()


def test_changes_after_prepare_are_patched_on_top(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    store.checkpoint(dirty=set())
    (ws / "d0" / "f0.txt").write_text("first\n")
    store.prepare({"d0/f0.txt"})
    (ws / "d0" / "f0.txt").write_text("second\n")  # changed again after the preparation
    (ws / "d1" / "f1.txt").write_text("also\n")
    cp = store.checkpoint(dirty={"d0/f0.txt", "d1/f1.txt"})
    assert store.read_file(cp.id, "d0/f0.txt") == b"second\n"
    assert store.read_file(cp.id, "d1/f1.txt") == b"also\n"
    assert cp.tree == store.scanner.scan(write=False).tree


@pytest.mark.parametrize("seed", range(6))
def test_prepared_checkpoints_equal_full_scans(tmp_path: Path, seed: int) -> None:
    """Random edits, some prepared and some not, always give a full scan's tree."""
    rng = random.Random(seed)
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    store.checkpoint(dirty=set())
    for _ in range(10):
        pending: set[str] = set()
        for _ in range(rng.randint(1, 3)):
            files = [p.relative_to(ws).as_posix() for p in sorted(ws.rglob("*"))
                     if p.is_file() and not p.is_symlink() and ".turnback" not in p.parts]
            dirty = _edit(ws, rng, files)
            if rng.random() < 0.6:
                store.prepare(dirty)
            else:
                pending |= dirty
        cp = store.checkpoint(dirty=pending)
        full = Store.open(ws).scanner.scan(write=False)
        assert cp.tree == full.tree, f"seed {seed}"
        assert (cp.files, cp.bytes) == (full.files, full.bytes)


def test_a_skipped_file_found_by_prepare_is_reported_by_the_checkpoint(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    store = Store.open(ws, config={"size_cap_bytes": 1000})
    store.checkpoint(dirty=set())
    (ws / "d0" / "big.bin").write_bytes(os.urandom(5000))
    store.prepare({"d0/big.bin"})
    cp = store.checkpoint(dirty=set())
    assert [s["path"] for s in cp.skipped] == ["d0/big.bin"]
    assert store.checkpoint(dirty=set()).skipped == [], "reported once, as after any scan"


def test_a_gc_after_prepare_leaves_no_cache_naming_removed_objects(tmp_path: Path) -> None:
    """Prepared objects are garbage until a checkpoint commits them: a gc by another
    process removes them, and the stat cache in memory must not be saved after it."""
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    store.checkpoint(dirty=set())
    f = ws / "d0" / "f0.txt"
    f.write_text("prepared, never committed\n")
    old = f.stat().st_mtime - 10
    os.utime(f, (old, old))  # not racily clean: its cache row will be trusted
    store.prepare({"d0/f0.txt"})
    Store.open(ws).gc()  # another process: the prepared blob is garbage, removed
    store.close()  # must not save a cache naming it
    again = Store.open(ws)
    cp = again.checkpoint()
    assert again.read_file(cp.id, "d0/f0.txt") == b"prepared, never committed\n"
    assert again.fsck().damaged == []


def test_full_checkpoint_after_an_unsaved_walk_records_what_changed(tmp_path: Path) -> None:
    """A ``prepare(None)`` walk of a changed workspace keeps its stat cache rows in memory,
    unsaved; a full checkpoint after it took the folder's last saved tree whole, recording
    'g' as it was at the previous checkpoint (the files aged: their rows are trusted)."""
    from wsutil import age, write

    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as store:
        write(ws, "g", "g")
        store.checkpoint()
        write(ws, "g", "g2")
        age(ws / "g")
        assert store.prepare(None)
        cp = store.checkpoint()
        assert store.read_file(cp.id, "g") == b"g2"
