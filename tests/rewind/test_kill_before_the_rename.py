"""A rewind killed between a file's second name and its rename: the second name is the
file itself (one inode, two names), so an edit made in place after the crash shows in both.

The next open's ``Applier.restore_late`` took that second name for a replaced file holding a
late write, and saved it aside: a ``z.txt.turnback-saved-<hex>`` hard link to z.txt itself,
which the user's next edit in place changes too, and z.txt reported as changed during the
rewind (redteam15).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.rewind.test_late_write_put_back import W2, _prepared, _saved

import turnback.rewind.apply as rw
import turnback.rewind.putback as putback
from turnback import Store
from turnback.fs.folders import Folder
from wsutil import journal_left

from .seams import W1, Killed, late_write_then_kill

# second names are made only where folders are held by descriptors (not TURNBACK_FS_PATHS=1)
pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="no second names where folders are reached by path")

EDIT = b"a line the user appended in place after the crash\n"


def test_an_edit_in_place_after_a_kill_before_the_rename_is_not_saved_aside(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, cp = _prepared(ws)
    real_keep = rw.Applier._keep_replaced

    def killed_after(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        kept = real_keep(self, dfd, name, *rest)
        if name == "z.txt":
            assert kept is not None
            raise Killed  # the second name made, z.txt not yet replaced
        return kept

    monkeypatch.setattr(rw.Applier, "_keep_replaced", killed_after)
    with pytest.raises(Killed):
        store.rewind(cp)
    monkeypatch.undo()
    assert journal_left(store.root)
    store.close()
    assert (ws / "z.txt").read_text() == "z2\n"  # never replaced
    with open(ws / "z.txt", "ab") as f:  # an edit in place (an appender, an editor's write)
        f.write(EDIT)
    with Store.open(ws) as again:
        assert not journal_left(again.root)
        assert again.journal_problem is None
    names = sorted(os.listdir(ws))
    assert (ws / "z.txt").read_bytes() == b"z2\n" + EDIT  # the edit kept in place
    assert (ws / "a.txt").read_text() == "a1\n"  # the rewind finished on the rest
    assert not [n for n in names if ".turnback-saved-" in n], names  # no copy of z.txt
    assert not [n for n in names if n.startswith(rw.TMP_PREFIX)], names


def test_a_kill_in_the_middle_of_a_save_aside_leaves_one_saved_file(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The open after a crash saves a late write aside (``link`` to the saved name, then
    ``unlink`` of the second name) and is killed between the two: the open after it saved
    the same file aside again, a second saved name, a hard link to the first."""
    store, cp = _prepared(ws)
    late_write_then_kill(ws, monkeypatch, store, cp)
    (ws / "z.txt").write_bytes(W2)  # the user's edit after the crash: W1 is saved aside
    real_move = putback._move_no_replace

    def killed_between(dfd: Folder, src: str, dst: str) -> None:
        if putback.SAVED_INFIX in dst:
            dfd.link(src, dst)
            raise Killed  # linked, not yet unlinked
        real_move(dfd, src, dst)

    monkeypatch.setattr(putback, "_move_no_replace", killed_between)
    with pytest.raises(Killed):
        Store.open(ws)
    monkeypatch.undo()
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert (ws / "z.txt").read_bytes() == W2
    assert _saved(ws, "z.txt") == [W1]  # once
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]
