"""Objects that are no record (``{}``, ``{"x": 1}``, an id that is a number) as the last
lines of ``oplog.jsonl`` and ``checkpoints.jsonl`` are passed over by the look at the last
record, as a session's head read passes them over (junk35). ``oplog.jsonl``'s last ``{}``
was taken as the last operation: every undo refused as damaged ("its session"), and
``fsck --repair`` found nothing after it to move. ``checkpoints.jsonl``'s made a fresh
process's no-op miss its one-read look-up of the recorded tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store

JUNK = [b"{}\n", b'{"x": 1}\n', b'{"id": 5, "op": "rewind"}\n', b'{"id": "z", "op": "other"}\n']


@pytest.mark.parametrize("junk", JUNK)
def test_undo_passes_over_an_object_after_the_last_operation(tmp_path: Path, junk: bytes
                                                             ) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        store.rewind(first.id)
    with open(ws / ".turnback" / "oplog.jsonl", "ab") as f:
        f.write(junk * 3)
    with Store.open(ws) as store:
        store.undo()  # before: StoreDamaged, the junk taken as the last operation
    assert (ws / "f.txt").read_text() == "two\n"


@pytest.mark.parametrize("junk", JUNK)
def test_the_last_checkpoint_is_found_after_an_object_that_is_none(tmp_path: Path,
                                                                  junk: bytes) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    with Store.open(ws) as store:
        cp = store.checkpoint(label="first")
    with open(ws / ".turnback" / "checkpoints.jsonl", "ab") as f:
        f.write(junk * 3)
    with Store.open(ws) as store:
        assert store.index.last_tree() == cp.tree  # before: None, the junk taken as last
