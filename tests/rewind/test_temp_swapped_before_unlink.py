"""A recovery's clean-up (``Applier.remove_temps``) looked at a temporary name, then unlinked
it by name: a file renamed to that very name between the two (a user's, an editor's save
through a rename) was deleted, its data lost if it had no other name. It now moves the name
to one of its own first and looks again there (``fs/leftovers.remove_checked``, the way the
sweep of hook and export leftovers does it): a file not the one looked at goes back
untouched (trust25; failed before: the swapped-in file was gone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from wsutil import dead_pid, journal_left, rewind_killed_before_release, rewind_temp, write


def test_a_file_renamed_to_a_temporary_name_after_the_look_is_kept(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    op = rewind_killed_before_release(ws)
    target = rewind_temp(op, "d/b.txt", dead_pid())  # a killed rewind's second name
    write(ws, f"d/{target}", "b2\n")
    real = rw._of_op
    swapped: list[str] = []

    def swap_after_the_look(op_: str, folder: str, tags: set[str], name: str,
                            st: os.stat_result) -> int | None:
        got = real(op_, folder, tags, name, st)
        if name == target and not swapped:
            write(ws, "d/elsewhere", "the user's only copy\n")
            os.replace(ws / "d/elsewhere", ws / "d" / target)
            swapped.append(name)
        return got

    monkeypatch.setattr(rw, "_of_op", swap_after_the_look)
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert swapped == [target]
    assert (ws / "d" / target).read_text() == "the user's only copy\n"
    left = {n for n in os.listdir(ws / "d") if n.startswith(rw.TMP_PREFIX)}
    assert left == {target}, "no name of ours left beside it"
    assert (ws / "d/a.txt").read_text() == "a1\n"
