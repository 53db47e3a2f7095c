"""jsonl: an appender's look at a file's end (is the tail torn? which is the last line?) read
once for both (branch atonce34: a session's append read the same last 4 KiB three times,
an at-once checkpoint's event among them). The shared read gives what the two separate
looks gave, at every window's edge, with a torn tail, and through a session's append."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest
from tests.fs.tail_setup import json_line, last_line_cut_at_read

from turnback import Kind, Store
from turnback.fs import jsonl
from turnback.fs.jsonl import TAIL_FIRST, TAIL_MOST, _torn_tail_start, last_line, tail_and_last_line

LENGTHS = (12, TAIL_FIRST - 1, TAIL_FIRST, TAIL_FIRST + 1, TAIL_FIRST * 5 + 3, TAIL_MOST + 7)


@pytest.mark.parametrize("torn", [0, 1, TAIL_FIRST, TAIL_MOST + 1])
@pytest.mark.parametrize("last", LENGTHS)
def test_the_shared_read_gives_the_tail_and_the_last_line_as_the_two_looks(
        tmp_path: Path, last: int, torn: int) -> None:
    p = tmp_path / "log.jsonl"
    good = json_line(1, 40) + json_line(2, last)
    p.write_bytes(good + (b'{"torn":"' + b"y" * torn if torn else b""))
    size = p.stat().st_size
    with open(p, "rb") as f:
        fd = f.fileno()
        assert tail_and_last_line(fd, size, shown=str(p)) == (
            _torn_tail_start(fd, size), last_line(p))
        assert tail_and_last_line(fd, size, shown=str(p)) == (
            len(good), jsonl.loads(json_line(2, last)))


def test_a_clean_end_is_read_once_for_both(tmp_path: Path) -> None:
    # the file's last block is read by the tail's look and used again by the line's: the
    # same bytes, not a second read of them (before: two reads of [size - 4096, size))
    p = tmp_path / "log.jsonl"
    p.write_bytes(json_line(1, 9000) + json_line(2, 100))
    size = p.stat().st_size
    reads: list[tuple[int, int]] = []
    real = os.pread

    def pread(fd: int, n: int, at: int) -> bytes:
        reads.append((n, at))
        return real(fd, n, at)

    with open(p, "rb") as f, mock.patch.object(os, "pread", pread):
        got = tail_and_last_line(f.fileno(), size, shown=str(p))
    assert got == (size, jsonl.loads(json_line(2, 100)))
    assert len(reads) == len(set(reads)) == 1


def test_a_session_append_after_a_torn_tail_cuts_it_and_follows_the_last_event(
        ws: Path) -> None:
    # the append's head (the new event's parent) and its write position come from the one
    # read: the torn half line is cut, the event follows the last whole one
    with Store.open(ws) as st:
        st.start_session(session_id="s-1")
        first = st.append("s-1", Kind.PROMPT, {"text": "x" * (TAIL_FIRST * 2)}).id
        path = st.root / "sessions" / "s-1.jsonl"
        whole = path.read_bytes()
        with open(path, "ab") as f:
            f.write(b'{"id":"half-written","kind":"no')
        ev = st.append("s-1", Kind.NOTE, {"text": "after"})
        assert ev.parent == first
        data = path.read_bytes()
        assert data.startswith(whole) and b"half-written" not in data
        assert data[len(whole):].count(b"\n") == 1
        nxt = st.append("s-1", Kind.NOTE, {"text": "again"})
        assert nxt.parent == ev.id
        assert [e.id for e in st.session("s-1").events][-3:] == [first, ev.id, nxt.id]


@pytest.mark.parametrize("at_call", [2, 3, 4])
@pytest.mark.parametrize("cut", [9, 5000, 20_000])
def test_a_file_cut_at_any_read_gives_a_whole_line_or_none(
        tmp_path: Path, cut: int, at_call: int) -> None:
    # another hand truncates the file between two reads back from its end. Before, pieces
    # read before and after the cut were glued into a line never written (a read past the
    # new end is empty: a cut at the third or fourth read gave an object {"n": 3, ...} that
    # no line of the file held, seen failing at d387941); now a short read looks again from
    # the new end
    p = tmp_path / "log.jsonl"
    lines = [json_line(1, 40), json_line(2, 9000), json_line(3, 30_000)]
    p.write_bytes(b"".join(lines))
    got, calls = last_line_cut_at_read(p, cut, at_call)
    assert got is None or got in [jsonl.loads(line) for line in lines]
    assert calls < 50
