"""jsonl: crash-tolerant appends (torn tails, bad middle lines)."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest

from turnback.fs.jsonl import append_lines, last_line, read_lines
from turnback.models import Problem


def values(path: Path, problems: list[Problem] | None = None) -> list[dict[str, object]]:
    return [line.value for line in read_lines(path, problems=problems)]


def test_append_and_read_back(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    assert append_lines(p, [{"n": 1}, {"n": 2}]) == 0
    start = append_lines(p, [{"n": 3}])
    assert start == len(b'{"n":1}\n{"n":2}\n')
    assert values(p) == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert last_line(p) == {"n": 3}


def test_missing_file_reads_empty(tmp_path: Path) -> None:
    assert values(tmp_path / "none.jsonl") == []
    assert last_line(tmp_path / "none.jsonl") is None


def test_torn_tail_skipped_then_repaired_by_next_append(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    append_lines(p, [{"n": 1}, {"n": 2}])
    with open(p, "ab") as f:
        f.write(b'{"n": 3, "half')  # a writer died mid-line
    problems: list[Problem] = []
    assert values(p, problems) == [{"n": 1}, {"n": 2}]
    assert problems == []  # a torn tail is not damage: it was never acknowledged
    assert last_line(p) == {"n": 2}
    append_lines(p, [{"n": 4}])
    assert p.read_bytes() == b'{"n":1}\n{"n":2}\n{"n":4}\n'
    assert values(p) == [{"n": 1}, {"n": 2}, {"n": 4}]


def test_torn_tail_without_any_newline(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    p.write_bytes(b'{"n": 1')
    assert values(p) == []
    append_lines(p, [{"n": 2}])
    assert values(p) == [{"n": 2}]


def test_bad_middle_line_reported_with_number_rest_read(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    p.write_bytes(b'{"n":1}\n{"n":2\n[1,2]\n\n{"n":5}\n')
    problems: list[Problem] = []
    assert values(p, problems) == [{"n": 1}, {"n": 5}]
    assert [(pr.line, pr.file) for pr in problems] == [(2, str(p)), (3, str(p))]
    assert "not valid JSON" in problems[0].message
    assert "not a JSON object" in problems[1].message
    # an append after damage keeps the damaged line and the good ones
    append_lines(p, [{"n": 6}])
    assert values(p) == [{"n": 1}, {"n": 5}, {"n": 6}]


def test_last_line_skips_bad_tail_lines(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    p.write_bytes(b'{"n":1}\nnot json\n')
    assert last_line(p) == {"n": 1}


def test_last_line_of_a_long_line(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    big = "x" * 300_000  # longer than the block read from the end
    append_lines(p, [{"n": 1}, {"big": big}])
    assert last_line(p) == {"big": big}


def test_a_look_at_a_long_files_end_reads_a_few_lines_not_64_kib(tmp_path: Path) -> None:
    # every append (a checkpoint's event, its line in checkpoints.jsonl) and the session's
    # head look at the file's end: each read 64 KiB of a long file's tail (branch atonce26)
    p = tmp_path / "log.jsonl"
    append_lines(p, [{"n": i, "pad": "x" * 300} for i in range(400)])  # ~130 KB
    read: list[int] = []
    real = os.pread

    def pread(fd: int, n: int, at: int) -> bytes:
        read.append(n)
        return real(fd, n, at)

    with mock.patch.object(os, "pread", pread):
        assert last_line(p) == {"n": 399, "pad": "x" * 300}
        append_lines(p, [{"n": 400}])
    assert 0 < sum(read) <= 3 * 4096
    assert last_line(p) == {"n": 400}
    # a torn tail longer than the first look is still found and cut off
    with open(p, "ab") as f:
        f.write(b'{"torn": "' + b"y" * 100_000)
    assert last_line(p) == {"n": 400}
    append_lines(p, [{"n": 401}])
    assert values(p)[-2:] == [{"n": 400}, {"n": 401}]


def test_read_from_offset_numbers_lines(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    append_lines(p, [{"n": 1}, {"n": 2}])
    start = append_lines(p, [{"n": 3}, {"n": 4}])
    lines = list(read_lines(p, start=start, first_line=3))
    assert [(ln.number, ln.value["n"]) for ln in lines] == [(3, 3), (4, 4)]
    assert lines[-1].end == p.stat().st_size


def test_file_lock_waits_then_names_the_lock(tmp_path: Path) -> None:
    import threading
    import time

    from turnback import Conflict
    from turnback.fs.locks import file_lock

    target = tmp_path / "sub" / "log.jsonl"
    with file_lock(target) as held:
        assert held.is_locked and (tmp_path / "sub" / "log.jsonl.lock").exists()
        with pytest.raises(Conflict, match=r"log\.jsonl\.lock .*more than 0\.05 s"):
            file_lock(target, timeout=0.05).acquire()
        threading.Timer(0.1, held.release).start()
        t = time.monotonic()
        with file_lock(target, timeout=5):  # taken as soon as the holder lets go
            assert time.monotonic() - t < 2


@pytest.mark.parametrize("torn", [False, True])
def test_a_line_past_the_bound_is_skipped_without_being_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torn: bool) -> None:
    """Red-team (branch redteam11): a session file planted as a header and 1 GiB of
    nothing (a sparse file: one torn tail) was read whole by every count, a server's full
    listing among them (2.2 GB, 5.7 s). A line longer than ``MAX_LINE`` is reported and
    skipped a bounded piece at a time; the lines around it are read."""
    import tracemalloc

    from turnback.fs import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE", 4096, raising=False)
    p = tmp_path / "s.jsonl"
    long = b"\0" * (8 << 20)
    p.write_bytes(b'{"n":1}\n' + long + (b"" if torn else b'\n{"n":2}\n'))
    problems: list[Problem] = []
    tracemalloc.start()
    try:
        got = values(p, problems)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == ([{"n": 1}] if torn else [{"n": 1}, {"n": 2}])
    assert peak < 1 << 20, f"{peak} bytes held reading a line of {len(long)}"
    assert [(x.line, x.message) for x in problems] == (
        [] if torn else [(2, "longer than 4096 bytes: not read")])
