"""Red team over a merge that keeps a log (redteam18): a log whose read stops at a frame no
writer makes (logs18) or at damage with frames after it (redteam12) stays on disk; its
readable objects must not be copied into a new pack again at every merge."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.objects import merging
from turnback.objects.packlog import encode

PLANTED = "log-1-0123456789abcdef"


def _pack_rows(root: Path) -> int:
    """Index rows over every pack (an object held twice counts twice)."""
    return sum((p.stat().st_size - 8) // 52 for p in (root / "objects" / "pack").glob("*.idx"))


def test_a_kept_logs_objects_are_not_copied_again_at_every_merge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's log of 40 objects copied under a new name, then a frame with no object:
    every merge kept it and copied its 40 objects into its new pack once more, so packs
    the merge leaves beside it (past ``PACK_MAX``, as a store's grow) held one copy more
    per merge (on main: 40 rows more at each of 3 merges)."""
    monkeypatch.setattr(merging, "PACK_MAX", 0)  # every pack left beside the next merge's
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(40):
        (ws / f"f{i}.txt").write_bytes(os.urandom(64))
    with Store.open(ws) as store:
        store.checkpoint()
        root = store.root
        (log,) = (root / "objects" / "log").iterdir()
    data = log.read_bytes()
    (log.parent / PLANTED).write_bytes(data + encode(len(data), [], b"", b""))
    grown = []
    for i in range(4):
        with Store.open(ws) as store:
            (ws / "a.txt").write_text(f"v{i}\n")
            store.checkpoint()
            before = _pack_rows(root)
            assert store.merge_logs(at_least=0) is not None
            grown.append(_pack_rows(root) - before)
            first = store.checkpoints()[0].id
            assert store.read_file(first, "f0.txt") == (ws / "f0.txt").read_bytes()
    assert (log.parent / PLANTED).exists()  # kept, for fsck to name
    # the first merge takes the writer's own log (its 40 objects, a tree); later ones a
    # checkpoint's new blob and tree only
    assert all(g <= 3 for g in grown[1:]), grown
