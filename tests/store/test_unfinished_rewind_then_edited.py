"""A rewind whose files are in place and whose recording was left to the next open
(``leave_unfinished``: a close that could not take the rewind lock; or a kill after its
second names were freed, in ``finish_rewind``'s sync), its files then edited by the
user or an agent (told the rewind was made, they go on working). The next open records
it, the edited files kept as they are, so undo reverts it. Until redteam51 the recovery's
look (``untouched``) found no path holding what the rewind wrote and emptied the journal:
a rewind the user was told was made was never recorded, and undo went to the one before."""

from __future__ import annotations

from pathlib import Path

from turnback import Store


def test_a_rewind_left_unfinished_then_edited_is_recorded(ws: Path) -> None:
    (ws / "a.txt").write_text("a1")
    (ws / "b.txt").write_text("b1")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
    (ws / "a.txt").write_text("a2")
    (ws / "b.txt").write_text("b2")
    (ws / "new.txt").write_text("n2")
    store = Store.open(ws)
    try:
        first = next(c for c in store.checkpoints() if c.label == "first")
        store.rewind(first.id, finish_later=True)  # a server's: answered now
        assert (ws / "a.txt").read_text() == "a1"
        store.leave_unfinished()  # the close could not record it
    finally:
        store.close()
    assert not (ws / "new.txt").exists()
    # the agent, told the rewind was made, goes on: every path it touched changed again
    (ws / "a.txt").write_text("a3")
    (ws / "b.txt").write_text("b3")
    (ws / "new.txt").write_text("n3")
    with Store.open(ws) as store:
        assert store.oplog.pending() is None
        ops = store.oplog.all()
        assert [op.get("op") for op in ops] == ["rewind"]
        assert sorted(ops[0].get("kept") or []) == ["a.txt", "b.txt", "new.txt"]
        store.undo()  # undoes that rewind: back to what it replaced
    assert (ws / "a.txt").read_text() == "a2"
    assert (ws / "b.txt").read_text() == "b2"
    assert (ws / "new.txt").read_text() == "n2"
