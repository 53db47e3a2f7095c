"""A folder nested past ``scan.MAX_SCAN_DEPTH`` is left out of checkpoints, said in their
``skipped`` and left alone by a rewind, as an unreadable folder is. Before, 600 nested
folders (one ``mkdir -p`` by an agent, or a planted tree) overran Python's recursion limit in
the walk (three frames a folder) and every checkpoint of the workspace failed with
``RecursionError`` (redteam27 found it at ~1,000 in its lost-name walk; the scan fails at
~320; these tests fail before)."""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.snapshot.scan import MAX_SCAN_DEPTH
from wsutil import age_tree, write

# A chain of hundreds of folders through the case-folding FUSE passthrough (tests/casefs.py,
# ``TURNBACK_TEST_FS=casefold``) costs minutes: each lookup resolves the whole path in Python.
# What is tested here is the walks' depth, not case folding.
pytestmark = pytest.mark.skipif(
    os.environ.get("TURNBACK_TEST_FS") == "casefold",
    reason="a chain hundreds of folders deep takes minutes through the casefold FUSE mount")


def _nest(ws: Path, depth: int) -> str:
    """``depth`` folders ``d/d/…`` with ``f.txt`` at the bottom; its path."""
    rel = "/".join(["d"] * depth)
    os.makedirs(ws / rel)
    (ws / rel / "f.txt").write_text("deep\n")
    return f"{rel}/f.txt"


def test_a_folder_past_the_bound_is_skipped_and_the_checkpoint_taken(ws: Path) -> None:
    write(ws, "top.txt", "1\n")
    deep = _nest(ws, MAX_SCAN_DEPTH + 345)  # 600 folders
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
        cut = "/".join(["d"] * (MAX_SCAN_DEPTH + 1))
        assert {"path": cut, "reason": f"nested more than {MAX_SCAN_DEPTH} folders deep"} \
            in cp.skipped
        assert store.read_file(cp.id, "top.txt") == b"1\n"
        assert store.read_file(cp.id, deep) is None
        # the at-once path: the deep file named as changed, the scan around it
        (ws / deep).write_text("deeper\n")
        write(ws, "top.txt", "2\n")
        told = store.checkpoint(dirty=[deep, "top.txt"])
        assert store.read_file(told.id, "top.txt") == b"2\n"
        assert any(s["path"] == cut for s in told.skipped)
        # a rewind to the first leaves the folder it never saw as it is
        store.rewind(cp.id)
        assert (ws / "top.txt").read_text() == "1\n"
        assert (ws / deep).read_text() == "deeper\n"


def test_a_folder_at_the_bound_is_checkpointed(ws: Path) -> None:
    deep = _nest(ws, MAX_SCAN_DEPTH)
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
        assert not cp.skipped
        assert store.read_file(cp.id, deep) == b"deep\n"
        (ws / deep).write_text("changed\n")
        assert store.read_file(store.checkpoint(dirty=[deep]).id, deep) == b"changed\n"
        store.rewind(cp.id)
        assert (ws / deep).read_text() == "deep\n"


def _levels(ws: Path, depth: int) -> str:
    """``_nest`` with a file at several levels too (folders with files and a subfolder)."""
    deep = _nest(ws, depth)
    for level in (1, 50, 128, 200, depth - 1):
        (ws / "/".join(["d"] * level) / f"f{level}.txt").write_text(f"{level}\n")
    return deep


def test_the_walk_takes_three_frames_a_folder_on_every_path(ws: Path) -> None:
    """The bound holds under a caller's deeper stack (the server's) only if each folder
    costs the walk three frames: a folder whose listing matched its record (``_reuse``)
    cost four, and from the third full checkpoint of 255 nested folders on (the first with
    records to match) every checkpoint, and the rewind's, failed with ``RecursionError``
    (redteam29; fails before)."""
    deep = _levels(ws, MAX_SCAN_DEPTH)
    age_tree(ws)
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
        store.checkpoint()  # the folders' signatures, then their records
        # frames below this one: three a folder and 80 for the store's calls around the walk
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(len(inspect.stack(0)) + 3 * MAX_SCAN_DEPTH + 80)
        try:
            again = store.checkpoint()  # every folder as its record says: reused
            (ws / deep).write_text("changed\n")
            told = store.checkpoint(dirty=[deep])
            store.rewind(cp.id)
        finally:
            sys.setrecursionlimit(limit)
        assert again.tree == cp.tree and not again.skipped
        assert store.read_file(told.id, deep) == b"changed\n"
        assert (ws / deep).read_text() == "deep\n"
