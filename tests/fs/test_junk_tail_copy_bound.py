"""``fsck --repair`` copies at most ``COPY_MOST`` bytes of a junk tail into its side file and
says what it dropped (trust36). It copied the whole tail: a planted sparse 2 GiB after a
log's last record became a 2 GiB side file, written out in full on the user's disk. The
bound is patched small here (the real one is ``HEAD_BYTES``, 129 MiB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback.fs import junk_tail
from turnback.fs.jsonl import dumps, last_line
from turnback.fs.junk_tail import set_aside

JUNK = b"x" * 99 + b"\n"


def test_the_side_file_holds_the_tails_first_bytes_and_the_rest_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(junk_tail, "COPY_MOST", 4096)
    path = tmp_path / "oplog.jsonl"
    record = dumps({"id": "a", "op": "rewind"}) + b"\n"
    path.write_bytes(record + JUNK * 1100)
    moved = set_aside(path)
    assert moved is not None
    assert (moved.bytes, moved.dropped) == (4096, len(JUNK) * 1100 - 4096)
    assert Path(moved.side).read_bytes() == (JUNK * 1100)[:4096]
    assert path.read_bytes() == record and last_line(path) == {"id": "a", "op": "rewind"}
