"""What the tests of a JSON Lines file's end (``test_jsonl_tails.py``,
``test_jsonl_one_tail_read.py``) write and do: lines of an exact length, and
``last_line`` read while another hand truncates the file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from unittest import mock

from turnback.fs.jsonl import last_line


def json_line(n: int, length: int) -> bytes:
    """A JSON object line of exactly ``length`` bytes with its newline (``length`` >= 12)."""
    head = b'{"n":%d,"p":"' % n
    return head + b"x" * (length - len(head) - 3) + b'"}\n'


def last_line_cut_at_read(path: Path, cut: int, at_call: int) -> tuple[Any, int]:
    """``last_line(path)`` while ``path`` is truncated to ``cut`` bytes right before its
    ``at_call``-th ``os.pread``; with how many reads it made."""
    real = os.pread
    calls = 0

    def pread(fd: int, n: int, at: int) -> bytes:
        nonlocal calls
        calls += 1
        if calls == at_call:
            os.truncate(path, cut)
        return real(fd, n, at)

    with mock.patch.object(os, "pread", pread):
        got = last_line(path)
    return got, calls
