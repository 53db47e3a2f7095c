"""``append_lines`` (``oplog.jsonl``, ``checkpoints.jsonl``) looks back ``HEAD_BYTES`` at most
for a torn tail's start, as a session's head read does (redteam45). It looked back without a
bound: a planted sparse multi-GiB last line with no newline was read whole by the first
append, then cut. Now the append is refused (``NoLastObject``, naming the file and
``fsck --repair``) and the file is left as it was; a torn tail within the bound is cut as
before. The bound is patched small here (the real one is 129 MiB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback.fs import jsonl
from turnback.fs.jsonl import NoLastObject, append_lines, dumps, read_lines


def _with_torn_tail(path: Path, length: int) -> bytes:
    path.write_bytes(dumps({"id": "a"}) + b"\n" + b"z" * length)
    return path.read_bytes()


def test_a_torn_tail_past_the_bound_refuses_the_append(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "HEAD_BYTES", 16 << 10)
    path = tmp_path / "oplog.jsonl"
    was = _with_torn_tail(path, 64 << 10)
    with pytest.raises(NoLastObject) as refused:  # before: read back whole, cut, appended
        append_lines(path, [{"id": "b"}])
    assert str(path) in refused.value.message and "fsck --repair" in refused.value.message
    assert path.read_bytes() == was  # nothing cut, nothing written


def test_a_torn_tail_within_the_bound_is_cut_as_before(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "HEAD_BYTES", 16 << 10)
    path = tmp_path / "checkpoints.jsonl"
    _with_torn_tail(path, 8 << 10)
    append_lines(path, [{"id": "b"}])
    assert [line.value["id"] for line in read_lines(path)] == ["a", "b"]
