"""A rewind killed after its first change, a removal, the file removed then made again by
the user (or an agent, a build) before the next open: the workspace is half rewound.
The next open finishes the rewind (the file made again kept, as any path changed since)
and records it, so that undo reverts it. Until redteam51 the recovery's look
(``untouched``) saw no removed path gone, no path holding what the rewind writes and no
second name (a removal and a create leave none), and emptied the journal: the rest of
the rewind was never made, nothing was recorded, there was no undo. A write's second
name, kept until the rewind's files are all in place, was a sign already (the second
case, passing before)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.rewind.apply import Applier


def _killed_after(ws: Path, method: str, first: str) -> None:
    pid = os.fork()
    if pid == 0:  # the child: nothing here returns
        try:
            store = Store.open(ws)
            real = getattr(Applier, method)

            def once(self: Applier, root: Any, path: str, *a: Any, **kw: Any) -> None:
                real(self, root, path, *a, **kw)
                if path == first:
                    os._exit(0)

            setattr(Applier, method, once)
            store.rewind(next(c for c in store.checkpoints() if c.label == "first").id)
        finally:
            os._exit(3)  # never killed: the test fails below
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("first", ["a removal", "a write"])
def test_a_half_rewind_whose_change_was_undone_by_hand_is_finished(ws: Path,
                                                                   first: str) -> None:
    (ws / "gone.txt").write_text("g1")
    (ws / "b.txt").write_text("b1")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
    (ws / "gone.txt").unlink()
    (ws / "new.txt").write_text("n2")
    (ws / "b.txt").write_text("b2")
    if first == "a removal":
        (ws / "b.txt").write_text("b1")  # not in the plan: only new.txt and gone.txt
        _killed_after(ws, "_remove", "new.txt")
        assert not (ws / "new.txt").exists()
        (ws / "new.txt").write_text("n3")  # made again before the next open
    else:
        _killed_after(ws, "_put", "b.txt")
        assert (ws / "b.txt").read_text() == "b1"
        (ws / "b.txt").write_text("b3")  # edited before the next open
    assert not (ws / "gone.txt").exists()  # the rest of the rewind not made
    with Store.open(ws) as store:
        assert store.oplog.pending() is None
        ops = store.oplog.all()
        assert [op.get("op") for op in ops] == ["rewind"]
        assert ops[0].get("kept") == (["new.txt"] if first == "a removal" else ["b.txt"])
    # finished: the paths unchanged since are rewound, the one changed again kept
    assert (ws / "gone.txt").read_text() == "g1"
    with Store.open(ws) as store:
        store.undo()  # that rewind's: back to what it replaced
    assert not (ws / "gone.txt").exists()
    assert (ws / "new.txt").read_text() == "n2"
    assert (ws / "b.txt").read_text() == ("b1" if first == "a removal" else "b2")
