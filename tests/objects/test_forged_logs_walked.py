"""Red team over ``cache/logs-walked`` (redteam18): the file is input, and a forged torn-end
line must hide nothing a crash's lost lines need nor take an open down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.objects.test_planted_log import _logged, _note

from turnback import Store
from turnback.objects import packlog


def _torn_store(tmp_path: Path, checkpoints: int) -> tuple[Path, Path, Path, list[bytes]]:
    """A store whose one log ends torn (a crash mid-write) and lost its last record line."""
    ws, lines, log, cache, kept = _logged(tmp_path, checkpoints)
    with open(log, "ab") as f:
        f.write(b"TBFR\0\0")  # a torn end
    lines.write_bytes(b"".join(kept[:-1]))  # a crash took the last line
    return ws, log, cache, kept


def _newest_frame(log: Path) -> packlog.Frame:
    fd = os.open(log, os.O_RDONLY)
    try:
        found, _ = packlog.frames(fd, 0, log.stat().st_size)
    finally:
        os.close(fd)
    return found[-1]


@pytest.mark.parametrize("inside", [1, 20, -41])
def test_a_forged_end_inside_a_torn_logs_newest_frame_hides_no_record(
        tmp_path: Path, inside: int) -> None:
    """A noted end where no frame starts was taken as the last frame's end: one inside the
    newest frame made the walk start before it, and the record a crash took from
    ``checkpoints.jsonl`` was not put back (on main: 2 checkpoints listed of 3)."""
    ws, log, cache, kept = _torn_store(tmp_path, 3)
    newest = _newest_frame(log)
    at = newest.pos + (inside if inside > 0 else newest.length + inside)
    _note(cache, log, at)
    with Store.open(ws) as store:
        assert len(store.checkpoints()) == len(kept)


@pytest.mark.parametrize("end", [9, 30, 47])
def test_a_forged_end_near_a_torn_logs_start_does_not_end_the_restore(
        tmp_path: Path, end: int) -> None:
    """A noted end before any frame could end (under the magic and a trailer's 48 bytes)
    made the walk back read at a negative offset under 40, an OSError (EINVAL) that
    ``restore_records`` swallows, ending the restore of this log and of every log after
    it; from 40 it hid every frame (on main: 1 checkpoint listed of 2)."""
    ws, log, cache, kept = _torn_store(tmp_path, 2)
    _note(cache, log, end)
    with Store.open(ws) as store:
        assert len(store.checkpoints()) == len(kept)


@pytest.mark.parametrize("kind", ["fifo", "link", "huge", "folder", "garbage"])
def test_a_cache_that_is_no_file_of_ours_is_passed_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A FIFO (an open that blocked on it would hang), a link to an endless device, 1 MiB,
    a folder, lines of garbage: read as no line, each open puts the lost record back (or
    finds it there) and returns."""
    monkeypatch.setattr(packlog, "DEEP", 2, raising=False)
    ws, log, cache, kept = _torn_store(tmp_path, 4)
    cache.parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(cache)
    elif kind == "link":
        cache.symlink_to("/dev/zero")
    elif kind == "huge":
        cache.write_bytes(b"x" * (1 << 20))
    elif kind == "folder":
        cache.mkdir()
    else:
        cache.write_bytes(b"\xff\0 1 2\n%s 1 2 3 4 5 -6 7 8\n" % log.name.encode() * 100)
    for _ in range(2):
        with Store.open(ws) as store:
            assert len(store.checkpoints()) == len(kept)


def test_a_forged_end_at_a_fake_frame_inside_a_stored_block_hides_no_record(
        tmp_path: Path) -> None:
    """A workspace file holding a frame whose structure and hash hold, stored raw (random
    bytes around it: zstd keeps the block as it is), puts a frame-like end inside the
    log's first frame. A line noting that end for the torn log (its identity right) was
    taken: the walk started there, and the newest frame's record, which the crash took
    from ``checkpoints.jsonl``, stayed hidden until a merge (on main: 2 listed of 3).
    redteam18 left it open; the noted end must now chain back to the log's start."""
    ws = tmp_path / "ws"
    ws.mkdir()
    row = os.urandom(32) + (8).to_bytes(8, "big") + (1).to_bytes(4, "big") + bytes(8)
    fake = packlog.encode(0, [os.urandom(2000)], row, b"")
    (ws / "planted.bin").write_bytes(os.urandom(4096) + fake + os.urandom(4096))
    with Store.open(ws) as store:
        for i in range(3):
            (ws / "a.txt").write_text(f"v{i}\n")
            store.checkpoint()
        lines = store.root / "checkpoints.jsonl"
        (log,) = (store.root / "objects" / "log").iterdir()
        cache = store.root / "cache" / "logs-walked"
    kept = lines.read_bytes().splitlines(keepends=True)
    data = log.read_bytes()
    assert data.count(fake) == 1  # stored raw, inside the first frame's block
    fake_end = data.index(fake) + len(fake)
    fd = os.open(log, os.O_RDONLY)
    try:
        first = packlog.frames(fd, 0, len(data))[0][0]
        assert packlog.frame_ending_at(fd, fake_end) is not None  # what the note leans on
    finally:
        os.close(fd)
    assert first.pos < fake_end < first.pos + first.length
    with open(log, "ab") as f:
        f.write(b"TBFR\0\0")  # a torn end
    lines.write_bytes(b"".join(kept[:-1]))  # a crash took the last line
    _note(cache, log, fake_end)
    with Store.open(ws) as store:
        assert len(store.checkpoints()) == len(kept)
