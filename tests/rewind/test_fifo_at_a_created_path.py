"""A FIFO (or socket, device) at a path a rewind creates: ``disk_entry`` calls it nothing
to keep, so the create was a plain rename over it, not ``trust28``'s no-replace rename; a
save renamed over the FIFO between the look and that rename was lost, its bytes in no
checkpoint. Now the FIFO is moved aside, looked at there and unlinked, and the create
replaces nothing (branch `redteam36`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
import turnback.rewind.putback as putback
from turnback import Store
from wsutil import journal_left

from .seams import N1, no_replace_here, removed_since

SAVE = b"the user's save over the FIFO\n"


def _fifo_where_a_file_was(ws: Path) -> tuple[Store, str]:
    store, cp = removed_since(ws)
    os.mkfifo(ws / "n.txt")
    return store, cp


def _save() -> Callable[[Path], None]:
    def save(ws: Path) -> None:
        (ws / "n.txt.swp").write_bytes(SAVE)
        os.replace(ws / "n.txt.swp", ws / "n.txt")
    return save


def test_a_fifo_at_a_created_path_is_replaced_by_the_checkpoints_file(ws: Path) -> None:
    """A guard: with nobody saving, the FIFO goes and n.txt is the checkpoint's (as before)."""
    store, cp = _fifo_where_a_file_was(ws)
    with store:
        store.rewind(cp)
        store.finish_rewind()
    assert (ws / "n.txt").read_bytes() == N1 and (ws / "a.txt").read_text() == "a1\n"
    assert sorted(os.listdir(ws)) == [".turnback", "a.txt", "n.txt"]


@pytest.mark.parametrize("seam", ("before the rename", "before the move aside"))
def test_a_save_over_a_fifo_at_a_created_path_is_kept(
        ws: Path, monkeypatch: pytest.MonkeyPatch, seam: str) -> None:
    """A save renamed over the FIFO at n.txt after the rewind's look: before its create's
    rename (its write's chmod) or before the FIFO's move aside. Kept, ``Changed`` naming
    n.txt, the rewind rolled back. The first case fails before the fix (n.txt held the
    checkpoint's bytes, the save in no file)."""
    if not no_replace_here(ws):
        pytest.skip("no RENAME_NOREPLACE here (or folders by path): the create is a rename")
    store, cp = _fifo_where_a_file_was(ws)
    fired: list[int] = []
    if seam == "before the rename":
        real_chmod = rw.chmod_fd

        def chmod_then(fd: int, where: str, mode: int) -> None:
            real_chmod(fd, where, mode)
            with open(where, "rb") as f:
                if f.read() == N1 and not fired:
                    fired.append(1)
                    _save()(ws)

        monkeypatch.setattr(rw, "chmod_fd", chmod_then)
    else:
        real_aside = putback._move_aside

        def saved_then(dfd: rw.Folder, name: str) -> str | None:
            if name == "n.txt" and not fired:
                fired.append(1)
                _save()(ws)
            return real_aside(dfd, name)

        monkeypatch.setattr(putback, "_move_aside", saved_then)
    with store:
        with pytest.raises(rw.Changed, match=r"n\.txt"):
            store.rewind(cp)
        assert not journal_left(store.root)
    assert fired
    assert (ws / "n.txt").read_bytes() == SAVE
    assert (ws / "a.txt").read_text() == "a2\n"
    # the FIFO is gone (nothing a rewind keeps, as a plain rename left it), nothing else
    assert sorted(os.listdir(ws)) == [".turnback", "a.txt", "n.txt"]
