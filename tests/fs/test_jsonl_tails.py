"""jsonl: a file's end as an attacker or a crash leaves it, read through the growing tail
windows (4 KiB, 16 KiB, then 64 KiB reads; branch atonce26) by appends and ``last_line``
(red-team pass redteam31)."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest
from tests.fs.tail_setup import json_line, last_line_cut_at_read

from turnback.fs import jsonl
from turnback.fs.jsonl import (
    TAIL_FIRST,
    TAIL_MOST,
    _torn_tail_start,
    append_lines,
    last_line,
    read_lines,
)
from turnback.fs.reading import NotRegular

# lengths at and around each window's edge, and their sums (where a look's reads end)
EDGES = sorted({n + d for n in (1, TAIL_FIRST, TAIL_FIRST * 5, TAIL_MOST, TAIL_FIRST * 21,
                                TAIL_FIRST * 21 + TAIL_MOST, 256 << 10, 3 << 20)
                 for d in (-1, 0, 1)} - {0})


def _expect_last(data: bytes) -> dict[str, object] | None:
    """What ``last_line`` must say: the last whole line that is a JSON object."""
    whole = data[: data.rfind(b"\n") + 1]
    for raw in reversed(whole.split(b"\n")):
        try:
            value = jsonl.loads(raw.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


@pytest.mark.parametrize("torn", [0, *EDGES])
def test_a_torn_tail_of_any_length_is_cut_and_no_line_is_lost(tmp_path: Path,
                                                              torn: int) -> None:
    # sound before and after: each window edge, a torn tail longer than every window
    p = tmp_path / "log.jsonl"
    for last in (12, TAIL_FIRST - 1, TAIL_FIRST, TAIL_FIRST + 1, TAIL_MOST + 7):
        good = json_line(1, 40) + json_line(2, last)
        p.write_bytes(good + b'{"torn":"' + b"y" * max(0, torn - 9))
        data = p.read_bytes()
        with open(p, "rb") as f:
            assert _torn_tail_start(f.fileno(), len(data)) == len(good)
        assert last_line(p) == _expect_last(data) == jsonl.loads(json_line(2, last))
        append_lines(p, [{"n": 3}])
        assert p.read_bytes() == good + b'{"n":3}\n'


@pytest.mark.parametrize("size", EDGES)
def test_one_line_without_a_newline_is_all_torn(tmp_path: Path, size: int) -> None:
    p = tmp_path / "log.jsonl"
    p.write_bytes(b"z" * size)
    assert last_line(p) is None
    assert append_lines(p, [{"n": 1}]) == 0
    assert p.read_bytes() == b'{"n":1}\n'


def test_crash_zeroes_crlf_blank_and_empty_files(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    p.write_bytes(b"")
    assert last_line(p) is None
    # a crash's zeroed blocks past the last line, a window and more long
    p.write_bytes(b'{"n":1}\n' + b"\0" * (TAIL_MOST * 3 + 5))
    assert last_line(p) == {"n": 1}
    append_lines(p, [{"n": 2}])
    assert p.read_bytes() == b'{"n":1}\n{"n":2}\n'
    # written on Windows, blank lines, a line not an object, a bad one: passed over
    p.write_bytes(b'{"n":1}\r\n{"n":2}\r\n\r\n[1]\nnot json\n\n')
    assert last_line(p) == {"n": 2}
    # the zeroed blocks ending in a newline (a later line's end): a bad line, not the last
    p.write_bytes(b'{"n":1}\n' + b"\0" * (TAIL_FIRST + 3) + b"\n")
    assert last_line(p) == {"n": 1}


def test_a_planted_line_past_max_line_is_passed_over_not_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a session's end as an attacker plants it: a good line, then a line of 8 MiB (sparse,
    # no disk) and a newline. Before, last_line read it whole, in reads growing by 4x (a
    # 256 MiB one: +768 MiB of memory, 4.7 s, on every append to that session); now in
    # reads of TAIL_MOST, and a line past MAX_LINE is not gathered (as read_lines)
    monkeypatch.setattr(jsonl, "MAX_LINE", 1 << 20)
    p = tmp_path / "s.jsonl"
    with open(p, "wb") as f:
        f.write(b'{"n":1}\n')
        f.truncate(f.tell() + (8 << 20))
        f.seek(0, os.SEEK_END)
        f.write(b"\n")
    reads: list[int] = []
    real = os.pread

    def pread(fd: int, n: int, at: int) -> bytes:
        reads.append(n)
        return real(fd, n, at)

    with mock.patch.object(os, "pread", pread):
        assert last_line(p) == {"n": 1}
    assert max(reads) <= TAIL_MOST
    # a long line under the bound is still gathered across many reads
    big = "q" * (jsonl.MAX_LINE - 100)
    append_lines(p, [{"big": big}])
    with mock.patch.object(os, "pread", pread):
        assert last_line(p) == {"big": big}
    assert max(reads) <= TAIL_MOST
    assert [line.value for line in read_lines(p)] == [{"n": 1}, {"big": big}]


def test_a_fifo_or_a_link_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    os.mkfifo(p)
    with pytest.raises(NotRegular):
        last_line(p)
    with pytest.raises(NotRegular):
        append_lines(p, [{"n": 1}])
    p.unlink()
    (tmp_path / "target").write_bytes(b'{"n":1}\n')
    p.symlink_to(tmp_path / "target")
    with pytest.raises(NotRegular):
        last_line(p)
    with pytest.raises(NotRegular):
        append_lines(p, [{"n": 2}])
    assert (tmp_path / "target").read_bytes() == b'{"n":1}\n'


@pytest.mark.parametrize("cut", [0, 9, 5000, 20_000])
def test_a_file_cut_while_its_end_is_read_gives_a_whole_line_or_none(
        tmp_path: Path, cut: int) -> None:
    # another writer (or an attacker) truncates the file between last_line's reads: the
    # answer is a line that was written whole, or None; the loop ends (sound before/after)
    p = tmp_path / "log.jsonl"
    lines = [json_line(1, 40), json_line(2, 9000), json_line(3, 30_000)]
    p.write_bytes(b"".join(lines))
    got, calls = last_line_cut_at_read(p, cut, 2)
    assert got is None or got in [jsonl.loads(line) for line in lines]
    assert calls < 50
