"""A rewind killed under a Turnback before ``trust24`` left its second names in the old shape,
``.turnback-tmp-<pid>-<8 hex>`` (no mark), the 8 hex the same ``kept_name`` tag. The recovery
by this version must still put back a late write such a name holds and free the names of
that op. Before (redteam26) it looked at marked names only: the late write stayed in a
temporary name the scan takes into checkpoints, the path at the target."""

from __future__ import annotations

import os
from pathlib import Path

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import rewindnames
from wsutil import journal_left, rewind_killed_before_release, write


def _killed_old(ws: Path) -> str:
    """A rewind of ``d/`` killed with its files in place, its second names renamed to the
    shape a Turnback before trust24 gave them: the op id."""
    op = rewind_killed_before_release(ws)
    for name in os.listdir(ws / "d"):
        got = rewindnames.parse(name)
        if got is not None:
            os.rename(ws / "d" / name, ws / "d" / f"{rw.TMP_PREFIX}{got[0]}-{got[1]}")
    return op


def test_an_old_shape_second_name_holding_a_late_write_is_put_back(ws: Path) -> None:
    op = _killed_old(ws)
    old = ws / "d" / f"{rw.TMP_PREFIX}{os.getpid()}-{rw.kept_name(op, 'd/a.txt')}"
    # a write before the rename (with folders by path no second name is kept: made here)
    old.write_text("a3, saved by the agent as the rewind ran\n")
    with Store.open(ws) as again:
        assert not journal_left(again.root)
        assert again.journal_problem is None
    assert (ws / "d/a.txt").read_text() == "a3, saved by the agent as the rewind ran\n"
    assert (ws / "d/b.txt").read_text() == "b1\n"
    assert not [n for n in os.listdir(ws / "d") if n.startswith(rw.TMP_PREFIX)]


def test_an_old_shape_look_alike_of_no_tag_of_the_op_is_left(ws: Path) -> None:
    _killed_old(ws)
    write(ws, f"d/{rw.TMP_PREFIX}{os.getpid()}-deadbeef", "mine\n")
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert (ws / f"d/{rw.TMP_PREFIX}{os.getpid()}-deadbeef").read_text() == "mine\n"
    assert sorted(n for n in os.listdir(ws / "d") if n.startswith(rw.TMP_PREFIX)) == [
        f"{rw.TMP_PREFIX}{os.getpid()}-deadbeef"]
