"""Red team (redteam18): no writer's path leaves a frame without an object, which logs18
makes end a log's read (the frames after it would go unread, their objects missing)."""

from __future__ import annotations

import os
from pathlib import Path

from turnback import Store
from turnback.objects import packlog


def _log_frames(folder: Path) -> list[tuple[str, int, int, int]]:
    """Each log's (name, frames read, where the read stopped, size)."""
    out = []
    for name in packlog.log_names(folder):
        fd = os.open(folder / name, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            found, end = packlog.frames(fd, 0, size)
            assert all(f.rows for f in found)
            assert not packlog.refused_at(fd, end, size), name
        finally:
            os.close(fd)
        out.append((name, len(found), end, size))
    return out


def test_every_writer_path_writes_frames_with_an_object(tmp_path: Path) -> None:
    """A checkpoint, one with nothing new (no frame: its record goes to checkpoints.jsonl),
    an empty batch (none written), a rewind (its safety frame, committed or refused) and an
    undo: every log reads to its end, every frame holding a row."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        first = store.checkpoint()
        store.checkpoint()  # nothing new
        with store.objects.batch(fsync=False):
            pass  # an empty batch
        with store.objects.batch(fsync=False, hold=True):
            pass
        (ws / "a.txt").write_text("b\n")
        (ws / "b.txt").write_text("new\n")
        store.rewind(first.id)
        store.undo()
        (ws / "a.txt").write_text("c\n")
        store.checkpoint()
        folder = store.root / "objects" / "log"
        logs = _log_frames(folder)
    assert logs and all(end == size for _, _, end, size in logs), logs
    assert sum(n for _, n, _, _ in logs) >= 3, logs
