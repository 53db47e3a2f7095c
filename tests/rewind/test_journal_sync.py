"""A rewind's safety checkpoint record is made durable with its journal, in one wait,
before the journal appears: a power cut can never leave a journal naming a safety
checkpoint that is not on disk (the undo of that rewind would have nothing to go back to)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from turnback import Store
from wsutil import write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="names a descriptor's file through /proc")


def test_the_safety_record_is_synced_before_the_journal_appears(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    seen: list[tuple[str, str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        seen.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd).st_size))
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path) -> None:
        seen.append(("replace", str(dst), 0))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    store.rewind(cp.id, finish_later=True)
    monkeypatch.undo()
    assert (ws / "f").read_text() == "v1"
    index = str(store.index.path)
    safety = store.checkpoints()[-1]
    assert safety.label.startswith("before rewind")
    synced_size = store.index.path.stat().st_size  # ends with the safety record
    journal_at = seen.index(("replace", str(store.oplog.journal), 0))
    assert ("fsync", index, synced_size) in seen[:journal_at], (
        "checkpoints.jsonl, with the safety checkpoint's record, must be synced before the "
        f"journal is renamed into place: {seen}")
    store.finish_rewind()
    assert store.oplog.pending() is None
