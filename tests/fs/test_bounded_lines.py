"""``fs/bounded_lines.whole_lines`` against a plain split, with reads far shorter than the
lines (``CHUNK`` made small): every whole line, None for one past the bound, the offset
past each, a final line with no newline left out; a sparse file's holes passed over."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from turnback.fs import bounded_lines
from turnback.fs.bounded_lines import whole_lines


def _expected(data: bytes, limit: int) -> list[tuple[bytes | None, int]]:
    out: list[tuple[bytes | None, int]] = []
    end = 0
    for line in data.split(b"\n")[:-1]:
        end += len(line) + 1
        out.append((line if len(line) <= limit else None, end))
    return out


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_whole_lines_as_a_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                chunk: int) -> None:
    monkeypatch.setattr(bounded_lines, "CHUNK", chunk)
    rng = random.Random(chunk)
    path = tmp_path / "f"
    for _ in range(200):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(0, 60)))
        path.write_bytes(data)
        limit = rng.randrange(0, 12)
        fd = os.open(path, os.O_RDONLY)
        try:
            assert list(whole_lines(fd, 0, limit)) == _expected(data, limit), (data, limit)
            cut = data.find(b"\n") + 1  # from the second line on: offsets from the start
            assert list(whole_lines(fd, cut, limit)) == [
                (raw, end + cut) for raw, end in _expected(data[cut:], limit)]
        finally:
            os.close(fd)


def test_a_hole_past_the_bound_is_not_read(tmp_path: Path) -> None:
    """1 GiB of hole inside a line and after the last one: the line is None, the record
    after it found, and the bytes read (``pread``) a few of ``CHUNK``, not the hole's."""
    path = tmp_path / "f"
    with open(path, "wb") as f:
        f.write(b'{"a": 1}\nx')
        f.seek(1 << 30, os.SEEK_CUR)
        f.write(b'x\n{"b": 2}\ny')
        f.truncate(f.tell() + (1 << 30))
    fd = os.open(path, os.O_RDONLY)
    try:
        if not hasattr(os, "SEEK_HOLE") or os.lseek(fd, 0, os.SEEK_HOLE) >= (1 << 30):
            pytest.skip("no holes in this file system")
    finally:
        os.close(fd)
    read = 0
    real = os.pread

    def counted(fd: int, n: int, at: int) -> bytes:
        nonlocal read
        data = real(fd, n, at)
        read += len(data)
        return data

    fd = os.open(path, os.O_RDONLY)
    try:
        os.pread = counted  # type: ignore[assignment]
        try:
            lines = list(whole_lines(fd, 0, 1000))
        finally:
            os.pread = real
    finally:
        os.close(fd)
    assert [raw for raw, _ in lines] == [b'{"a": 1}', None, b'{"b": 2}']
    assert read < 8 * bounded_lines.CHUNK, read  # not the 2 GiB of holes
