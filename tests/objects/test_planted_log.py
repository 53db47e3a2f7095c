"""A log planted in ``objects/log/`` (a valid name, frames whose structure holds) costs an
open bounded work and memory, and is kept on disk and named (logs18)."""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store
from turnback.objects import packlog
from turnback.objects.packlog import LOG_MAGIC, encode

PLANTED = "log-1-0123456789abcdef"


def _row(n: int, pos: int) -> bytes:
    """One index row (``packs._ENTRY``) naming a one-byte block right after the head."""
    return (n.to_bytes(32, "big") + (pos + 20).to_bytes(8, "big")
            + (1).to_bytes(4, "big") + (0).to_bytes(4, "big") + (1).to_bytes(4, "big"))


def _plant(path: Path, count: int, frame: Callable[[int, int], bytes]) -> None:
    """``count`` frames made by ``frame(n, pos)``, then a torn end."""
    with open(path, "wb") as f:
        f.write(LOG_MAGIC)
        pos = len(LOG_MAGIC)
        for n in range(count):
            data = frame(n, pos)
            f.write(data)
            pos += len(data)
        f.write(b"TBFR\0\0")


def _store_with_planted_empty_frames(tmp_path: Path, count: int) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        store.checkpoint()
        planted = store.root / "objects" / "log" / PLANTED
    _plant(planted, count, lambda n, pos: encode(pos, [], b"", b""))
    return ws, planted


def test_a_planted_log_of_empty_frames_is_read_no_further_than_its_first_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No writer writes a frame without an object: the first one ends the log's read, so
    an open does not walk the planted frames (on main: every one, at every open)."""
    ws, planted = _store_with_planted_empty_frames(tmp_path, 2000)
    looked = _counting(monkeypatch)
    with Store.open(ws) as store:
        assert store.read_file(store.checkpoints()[0].id, "a.txt") == b"a\n"
        opened = len(looked)
        named = [d for d in store.fsck().damaged if d["what"] == "log"]
    assert opened < 20, opened
    assert [d["id"] for d in named] == [PLANTED]
    assert "holds no object" in named[0]["problem"]
    assert planted.stat().st_size > 2000 * 60  # kept on disk


def test_a_merge_keeps_a_log_of_frames_no_writer_makes(tmp_path: Path) -> None:
    """The planted log reads as no frame, like a writer's leftover that a merge removes
    when old: it is someone's file (an attacker's, a user's), so it stays for fsck to name."""
    ws, planted = _store_with_planted_empty_frames(tmp_path, 50)
    data = planted.read_bytes()
    old = time.time() - 10 * 3600
    os.utime(planted, (old, old))
    with Store.open(ws) as store:
        assert store.merge_logs(at_least=0) is not None  # the writer's log was merged
    assert planted.read_bytes() == data


def test_a_torn_end_walk_back_holds_a_segment_not_every_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A torn end makes the walk back read the log forward first; it held every frame
    (~120 bytes a frame, 84 MiB for a planted 32 MiB log at each open). Now one segment,
    and the records still come newest first."""
    monkeypatch.setattr(packlog, "SEGMENT_FRAMES", 64, raising=False)
    folder = tmp_path / "log"
    folder.mkdir()
    count = 5000
    _plant(folder / PLANTED, count, lambda n, pos: encode(pos, [b"\0"], _row(n, pos), b""))
    tracemalloc.start()
    try:
        assert list(packlog.records(folder, lambda record: True)) == []  # walked whole
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < count * 52, peak  # less than the frames' rows alone

    with_records = tmp_path / "records"
    with_records.mkdir()
    _plant(with_records / PLANTED, 300,
           lambda n, pos: encode(pos, [b"\0"], _row(n, pos), b'{"n": %d}' % n))
    got = list(packlog.records(with_records, lambda record: True))
    assert got == [b'{"n": %d}' % n for n in reversed(range(300))]
    assert list(packlog.records(with_records, lambda record: b'"n": 297' not in record)) == [
        b'{"n": 299}', b'{"n": 298}']


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each frame position ``packlog`` looks at, from now on."""
    looked: list[int] = []
    frame_at = packlog._frame_at

    def counted(fd: int, pos: int, size: int, **kw: bool) -> packlog.Frame | None:
        looked.append(pos)
        return frame_at(fd, pos, size, **kw)

    monkeypatch.setattr(packlog, "_frame_at", counted)
    return looked


@pytest.mark.parametrize("torn", [True, False])
def test_a_log_walked_whole_without_a_record_is_not_walked_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torn: bool) -> None:
    """A planted log of one-object frames (what a writer's invariants allow) was walked
    whole at every open; now at the first, and a later open stops after ``DEEP`` frames.
    Appended to (its identity changed), it is walked whole once more."""
    monkeypatch.setattr(packlog, "DEEP", 16, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        store.checkpoint()
        planted = store.root / "objects" / "log" / PLANTED
    _plant(planted, 500, lambda n, pos: encode(pos, [b"\0"], _row(n, pos), b""))
    if not torn:
        planted.write_bytes(planted.read_bytes()[:-6])
    looked = _counting(monkeypatch)
    opens = []
    for _ in range(3):
        looked.clear()
        Store.open(ws).close()
        opens.append(len(looked))
    assert opens[0] >= 500 and opens[1] < 50 and opens[2] < 50, opens
    planted.touch()  # its times only (trust19: on main a walk whole again, 500 looks)
    looked.clear()
    Store.open(ws).close()
    assert len(looked) < 50, len(looked)
    with open(planted, "ab") as f:
        f.write(b"\0")  # a new identity: not the log that was walked
    looked.clear()
    Store.open(ws).close()
    assert len(looked) >= 500


def _logged(tmp_path: Path, checkpoints: int) -> tuple[Path, Path, Path, Path, list[bytes]]:
    """A store of ``checkpoints`` checkpoints in its one object log: (the workspace, its
    ``checkpoints.jsonl``, the log, ``cache/logs-walked``, the file's lines)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as store:
        for i in range(checkpoints):
            (ws / "a.txt").write_text(f"v{i}\n")
            store.checkpoint()
        lines = store.root / "checkpoints.jsonl"
        (log,) = (p for p in (store.root / "objects" / "log").iterdir())
        cache = store.root / "cache" / "logs-walked"
    return ws, lines, log, cache, lines.read_bytes().splitlines(keepends=True)


def _note(cache: Path, log: Path, end: int) -> None:
    """A line naming ``log`` as it is now (what anyone who can stat it writes), its last
    frame said to end at ``end``."""
    st = log.stat()
    cache.parent.mkdir(exist_ok=True)
    cache.write_text(f"{log.name} {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} "
                     f"{st.st_ctime_ns} {end}\n")


def test_a_forged_walked_mark_delays_only_records_past_deep_frames_until_fsck(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is input: a line naming a writer's real log, identity right, does not stop
    the open from putting back the records of its newest ``DEEP`` - 1 frames; those further
    back (here 3 of the 6 a crash took) come back with the next fsck, which never reads the
    cache (as a merge and gc). A guard: it passes on main, which has no cache."""
    monkeypatch.setattr(packlog, "DEEP", 4, raising=False)
    ws, lines, log, cache, kept = _logged(tmp_path, 8)
    _note(cache, log, log.stat().st_size)
    lines.write_bytes(b"".join(kept[:-6]))  # a crash took the last six lines
    with Store.open(ws) as store:
        listed = len(store.checkpoints())
        assert listed >= len(kept) - 6 + 3, listed  # the newest frames' records: put back
        store.fsck()
        assert len(store.checkpoints()) == len(kept)


def test_a_forged_end_before_a_torn_logs_newest_frame_is_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A torn log noted as walked starts its walk where its last frame ended; a line naming
    an earlier frame's end (identity right) would skip the newest frames, whose records a
    crash takes first: a complete frame starts there, so the line is ignored."""
    ws, lines, log, cache, kept = _logged(tmp_path, 3)
    fd = os.open(log, os.O_RDONLY)
    try:
        last = packlog.frame_ending_at(fd, log.stat().st_size)
    finally:
        os.close(fd)
    assert last is not None
    with open(log, "ab") as f:
        f.write(b"TBFR\0\0")  # a torn end
    _note(cache, log, last.pos)  # the end of the frame before it
    lines.write_bytes(b"".join(kept[:-1]))  # a crash took the last line
    with Store.open(ws) as store:
        assert len(store.checkpoints()) == len(kept)
