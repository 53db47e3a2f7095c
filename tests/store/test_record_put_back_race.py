"""A record put back by another open between a checkpoint's log frame and its line in
``checkpoints.jsonl`` (``restore_records`` at ``Store.open``): the writer then appends it
too, and the file holds it twice (branch junk33, left open by redteam40). Made to happen
every time by a hook in ``CheckpointIndex.add``. What this pins: every reader a user meets
keeps one record per id, in the order the checkpoints were made, and says nothing of a
repair — so the second line is not a defect a user can see, and is left as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

from turnback import Store
from turnback.store.checkpoint_index import CheckpointIndex


def test_a_record_put_back_while_its_writer_appends_is_listed_once(ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as st:
        st.checkpoint(label="first")
    real_add = CheckpointIndex.add
    later: list[str] = []
    hooked: list[bool] = []

    def add(index: CheckpointIndex, cp: Any, **kw: Any) -> None:
        if not hooked:  # another process opens the store now: its open puts the record back
            hooked.append(True)
            with Store.open(ws) as other:
                (ws / "a.txt").write_text("three")
                later.append(other.checkpoint(label="third").id)  # and checkpoints after
        real_add(index, cp, **kw)

    (ws / "a.txt").write_text("two")
    with Store.open(ws) as st, mock.patch.object(CheckpointIndex, "add", add):
        second = st.checkpoint(label="second")
    lines = (ws / ".turnback" / "checkpoints.jsonl").read_bytes().count(
        f'"id":"{second.id}"'.encode())
    assert lines == 2  # the race happened: put back by the other open, then appended
    with Store.open(ws) as st:
        listed = st.checkpoints()
        assert [c.label for c in listed] == ["first", "second", "third"]
        assert listed[-1].id == later[0]
        assert st.fsck().ok
        assert not st.set_aside()  # no notice of a repair
        st.gc(keep_last=2)
        assert [c.label for c in st.checkpoints()] == ["second", "third"]
