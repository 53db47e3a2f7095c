"""A store replaced while a process uses it is named so, whichever step meets it first.

The store's root is renamed away during a checkpoint's scan and a link to a folder outside,
nothing, or an empty folder put in its place: the scan's first read of an object then found
it "missing" and said to run fsck (redteam31's open item), and with nothing in its place a
full checkpoint's first write failed with a bare ``FileNotFoundError``. Both now say the
store was replaced (``store27``); nothing is written anywhere, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import TurnbackError

from .swap_setup import put_back, replaced_at_scan


def _files(root: Path) -> list[str]:
    if root.is_symlink() or not root.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("how", ["checkpoint_now", "checkpoint"])
@pytest.mark.parametrize("put", ["a link", "nothing", "an empty folder"])
@pytest.mark.parametrize("named", [False, True], ids=["in the workspace", "--store"])
def test_a_store_swapped_in_the_scan_is_named_replaced(
        tmp_path: Path, put: str, how: str, named: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "g.txt").write_text("g\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store_dir = tmp_path / "named-store" if named else None
    with Store.open(ws, store_dir=store_dir) as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        (ws / "f1.txt").write_text("changed\n")
        root, moved = store.root, tmp_path / "moved"
        with replaced_at_scan(root, moved, put, elsewhere), pytest.raises(TurnbackError) as got:
            if how == "checkpoint_now":
                store.checkpoint_now({"f1.txt"})
            else:
                store.checkpoint()
        message = str(got.value)
        assert str(root) in message
        assert "was replaced" in message or "no longer the folder Turnback opened" in message
        assert "missing" not in message and "fsck" not in message
        assert _files(elsewhere) == [] and _files(root) == []
    put_back(root, moved)
    with Store.open(ws, store_dir=store_dir) as store:
        assert [c.label for c in store.checkpoints()] == ["walk"]
        assert store.fsck().ok
