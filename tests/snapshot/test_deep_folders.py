"""A folder nested past ``scan.MAX_SCAN_DEPTH`` is left out of checkpoints, said in their
``skipped`` and left alone by a rewind, as an unreadable folder is. Before, 600 nested
folders (one ``mkdir -p`` by an agent, or a planted tree) overran Python's recursion limit in
the walk (three frames a folder) and every checkpoint of the workspace failed with
``RecursionError`` (redteam27 found it at ~1,000 in its lost-name walk; the scan fails at
~320; these tests fail before)."""

from __future__ import annotations

import os
from pathlib import Path

from turnback import Store
from turnback.snapshot.scan import MAX_SCAN_DEPTH
from wsutil import write


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
