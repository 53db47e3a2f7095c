"""``turnback fsck`` names ``oplog.jsonl`` when undo cannot use it: a run of objects that
name no operation past the head read's bound (``NoLastObject``: every undo and every
rewind's record refused, the refusal saying "'turnback fsck' lists them"), or something
other than a file at its name (a FIFO, a folder: ``NotRegular``). It never looked at that
file: "ok" in both cases, and ``fsck --repair`` passed over the second saying it was
"named by the check that follows" (redteam48)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged


def _rewound(ws: Path) -> Path:
    (ws / "f.txt").write_text("one\n")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        store.rewind(first.id)
    return ws / ".turnback" / "oplog.jsonl"


def _op_log_damage(ws: Path) -> list[dict[str, object]]:
    with Store.open(ws) as store:
        return [d for d in store.fsck().damaged if d["what"] == "operation log"]


def test_a_junk_run_past_the_bound_is_named(ws: Path) -> None:
    oplog = _rewound(ws)
    with open(oplog, "ab") as f:
        f.write(b"{}\n" * 1100)
    with Store.open(ws) as store, pytest.raises(StoreDamaged, match="fsck"):
        store.undo()
    found = _op_log_damage(ws)  # before: none, fsck said "ok"
    assert len(found) == 1 and "fsck --repair" in str(found[0]["recoverable"])
    assert str(oplog) == found[0]["id"]
    with Store.open(ws) as store:
        assert store.repair_logs()
    assert not _op_log_damage(ws)
    with Store.open(ws) as store:
        store.undo()
    assert (ws / "f.txt").read_text() == "two\n"


@pytest.mark.parametrize("kind", ["a FIFO", "a folder"])
def test_what_is_no_file_at_its_name_is_named(ws: Path, kind: str) -> None:
    oplog = _rewound(ws)
    oplog.unlink()
    if kind == "a FIFO":
        os.mkfifo(oplog)
    else:
        oplog.mkdir()
    with Store.open(ws) as store:
        assert store.repair_logs() == []  # left as it is
    found = _op_log_damage(ws)  # before: none, fsck said "ok"
    assert len(found) == 1 and "move it away" in str(found[0]["recoverable"])
    assert ("FIFO" if kind == "a FIFO" else "folder") in str(found[0]["problem"])


@pytest.mark.parametrize("line", [b'{"id": "zz", "op": "rewind"}\n',
                                  b'{"id": "zz", "op": "undo", "session": "workspace"}\n'])
def test_a_last_operation_undo_refuses_is_named(ws: Path, line: bytes) -> None:
    """A line that names an operation (``is_op``) but whose fields undo refuses: the
    refusal says "run 'turnback fsck'", which found nothing (and ``--repair`` keeps it)."""
    oplog = _rewound(ws)
    with open(oplog, "ab") as f:
        f.write(line)
    with Store.open(ws) as store, pytest.raises(StoreDamaged, match="last line"):
        store.undo()
    found = _op_log_damage(ws)  # before: none
    assert len(found) == 1 and "by hand" in str(found[0]["recoverable"])
    assert "last line" in str(found[0]["problem"])
