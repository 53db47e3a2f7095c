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

from .swap_setup import files_below, put_back, replaced_at_scan, three_files_and_a_folder


@pytest.mark.parametrize("how", ["checkpoint_now", "checkpoint"])
@pytest.mark.parametrize("put", ["a link", "nothing", "an empty folder"])
@pytest.mark.parametrize("named", [False, True], ids=["in the workspace", "--store"])
def test_a_store_swapped_in_the_scan_is_named_replaced(
        tmp_path: Path, put: str, how: str, named: bool) -> None:
    ws, elsewhere = three_files_and_a_folder(tmp_path)
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
        assert files_below(elsewhere) == [] and files_below(root) == []
    put_back(root, moved)
    with Store.open(ws, store_dir=store_dir) as store:
        assert [c.label for c in store.checkpoints()] == ["walk"]
        assert store.fsck().ok
