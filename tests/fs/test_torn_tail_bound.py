"""A head read looks back ``HEAD_BYTES`` at most for a torn tail's start too (branch
redteam45). A planted final line with no newline longer than that (a sparse 2 GiB of zeros
after a session's last event) was read whole, back from the end in 64 KiB reads, by every
look at the file's last record: each ``head`` of the session, each fresh process's no-op
checkpoint (``checkpoints.jsonl``), each undo (``oplog.jsonl``): 2 GiB read, ~0.8 s of CPU,
never healed by a reader. It is now ``NoLastObject``, which ``fsck --repair`` moves aside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.fs.jsonl import HEAD_BYTES, NoLastObject, dumps, last_line
from turnback.fs.junk_tail import set_aside

RECORD = {"id": "a", "kind": "note"}


def _with_torn_tail(path: Path, length: int) -> int:
    path.write_bytes(dumps(RECORD) + b"\n")
    kept = path.stat().st_size
    with open(path, "ab") as f:
        f.truncate(kept + length)  # zeros, no newline: sparse
    return kept


def test_a_torn_tail_past_the_head_bytes_is_refused_and_repaired(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    kept = _with_torn_tail(path, HEAD_BYTES + 1)
    with pytest.raises(NoLastObject):  # before: the whole tail read back, RECORD returned
        last_line(path)
    moved = set_aside(path)
    # its first HEAD_BYTES copied (COPY_MOST), the byte after them dropped (trust36)
    assert moved is not None and (moved.bytes, moved.dropped) == (HEAD_BYTES, 1)
    assert path.stat().st_size == kept and last_line(path) == RECORD
    side = Path(moved.side)
    assert side.stat().st_size == HEAD_BYTES
    side.unlink()  # 129 MiB written: not left for pytest's kept folders


def test_a_torn_tail_within_the_head_bytes_is_passed_over_as_before(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _with_torn_tail(path, 1 << 20)
    assert last_line(path) == RECORD
    with open(path, "ab") as f:
        f.write(b"\n" + dumps({"id": "b"}) + b"\n" + b"x" * 10)
    assert last_line(path) == {"id": "b"}
    os.truncate(path, 0)
    assert last_line(path) is None
