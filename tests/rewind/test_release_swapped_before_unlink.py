"""The release's unlink of each second name (``apply._unlink_own``: every replaced file of
every rewind) looked at the name, then unlinked it by name: a file renamed to that very name
between the two (an editor's save through a rename, a user's file) was deleted, its data
lost if it had no other name (trust25's open item). It now moves the name to one of the
rewind's own first and looks again there (``fs/leftovers.remove_checked``, as the
recovery's ``remove_temps`` since trust25): a file not the one linked goes back untouched
(swap27; failed before: the renamed file was gone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from wsutil import journal_left, keeps_replaced, second_names, write


def test_a_file_renamed_to_a_second_name_after_the_release_looks_is_kept(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "d/a.txt", "a1\n")
    write(ws, "d/b.txt", "b1\n")
    if not keeps_replaced(ws):
        pytest.skip("no second names here (folders reached by path, or no hard links)")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        write(ws, "d/a.txt", "a2\n")
        write(ws, "d/b.txt", "b2\n")
        store.rewind(cp.id, finish_later=True)  # answered: the second names stand
        kept = {p.name for p in second_names(ws)}
        assert len(kept) == 2
        target = min(kept)
        real = rw._lstat_or_none
        swapped: list[str] = []

        def swap_after_the_look(dfd: rw.Folder, name: str) -> os.stat_result | None:
            got = real(dfd, name)
            if name == target and not swapped:
                write(ws, "d/elsewhere", "the user's only copy\n")
                os.replace(ws / "d/elsewhere", ws / "d" / target)
                swapped.append(name)
            return got

        monkeypatch.setattr(rw, "_lstat_or_none", swap_after_the_look)
        store.finish_rewind()
        monkeypatch.undo()
        assert not journal_left(store.root)
    assert swapped == [target]
    assert (ws / "d" / target).read_text() == "the user's only copy\n"
    assert [p.name for p in second_names(ws)] == [target], "no name of ours left beside it"
    assert (ws / "d/a.txt").read_text() == "a1\n" and (ws / "d/b.txt").read_text() == "b1\n"
