"""A rewind's safety checkpoint is made durable with its journal, in one wait, before the
first workspace file changes: a power cut can never leave a rewind begun whose journal or
safety checkpoint is not on disk (its recovery, or its undo, would have nothing to go by).
A small safety checkpoint's record is in its object log frame, synced in that wait; its
line in ``checkpoints.jsonl`` is written after it. Since format 3 the journal is written in
place, so once its file exists no folder is synced for it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import exchange
from wsutil import write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="names a descriptor's file through /proc")


def _rewind_watched(store: Store, cp: str, monkeypatch: pytest.MonkeyPatch
                    ) -> list[tuple[str, str, int]]:
    """The fsyncs (file, size then) and renames (or replaces, or swaps: a file replaced is
    swapped into place where the system can, ``fs/exchange.py``) of one rewind, in order."""
    seen: list[tuple[str, str, int]] = []
    real_fsync, real_rename, real_replace = os.fsync, os.rename, os.replace
    real_swap = exchange._raw

    def swap(dir_fd: int, a: bytes, b: bytes) -> int:
        seen.append(("rename", os.fsdecode(b), 0))
        return real_swap(dir_fd, a, b)

    def fsync(fd: int) -> None:
        seen.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd).st_size))
        real_fsync(fd)

    def rename(src: str, dst: str, **kw: int) -> None:
        seen.append(("rename", str(dst), 0))
        real_rename(src, dst, **kw)

    def replace(src: str, dst: str, **kw: int) -> None:  # folders reached by path
        seen.append(("rename", str(dst), 0))
        real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(exchange, "_raw", swap)
    store.rewind(cp, finish_later=True)
    monkeypatch.undo()
    return seen


def test_the_safety_record_and_the_journal_are_synced_before_a_file_changes(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    seen = _rewind_watched(store, cp.id, monkeypatch)
    assert (ws / "f").read_text() == "v1"
    safety = store.checkpoints()[-1]
    assert safety.label.startswith("before rewind")
    # "f" through a folder's descriptor; its whole path where folders are reached by path
    # (TURNBACK_FS_PATHS=1, as on Windows)
    first_write = next(i for i, s in enumerate(seen)
                       if s[0] == "rename" and s[1] in ("f", str(ws / "f")))
    journal_size = store.oplog.journal.stat().st_size
    assert journal_size > 0 and store.oplog.pending() is not None
    before = seen[:first_write]
    frame = [(str(p), p.stat().st_size) for p in (store.root / "objects" / "log").iterdir()
             if safety.id.encode() in p.read_bytes()]
    assert len(frame) == 1, frame
    assert ("fsync", *frame[0]) in before, (
        f"the log frame holding the safety record must be synced before a file changes: "
        f"{seen}")
    assert all(b != str(store.index.path) for a, b, _ in before if a == "fsync"), (
        f"its line in checkpoints.jsonl needs no wait of its own: {seen}")
    assert ("fsync", str(store.oplog.journal), journal_size) in before, (
        f"the journal, whole, must be synced before a file changes: {seen}")
    store.finish_rewind()
    assert store.oplog.pending() is None
    assert store.oplog.journal.exists() and store.oplog.journal.stat().st_size == 0, (
        "an ended journal is emptied, not removed (format 3)")


def test_a_journal_in_place_syncs_no_folder(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first rewind makes the journal file (its folder synced for the name); the next
    one writes into it: no sync of the store's folder, no rename of a journal."""
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    first = _rewind_watched(store, cp.id, monkeypatch)
    assert any(a == "fsync" and b == str(store.root) for a, b, _ in first), first
    store.finish_rewind()
    write(ws, "f", "v3")
    again = _rewind_watched(store, cp.id, monkeypatch)
    assert (ws / "f").read_text() == "v1"
    assert all(b != str(store.root) for a, b, _ in again if a == "fsync"), again
    assert all(b != str(store.oplog.journal) for a, b, _ in again if a == "rename"), again
    assert any(b == str(store.oplog.journal) for a, b, _ in again if a == "fsync"), again
    store.finish_rewind()


def test_the_files_are_read_while_the_journal_is_synced(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The targets' contents are read (and checked) on the rewind's thread while its
    journal's sync is waited for, not one by one as they are written: the journal's fsync
    here waits until they are all read, which it could not if they were read after it."""
    import threading

    from turnback.objects.objectstore import ObjectStore
    from turnback.rewind.apply import Applier

    for i in range(5):
        write(ws, f"d/f{i}", f"v1 {i}")
    cp = store.checkpoint()
    for i in range(5):
        write(ws, f"d/f{i}", f"v2 {i}")
    read: list[str] = []
    all_read = threading.Event()
    real_get, real_fsync, real_apply = ObjectStore.get, os.fsync, Applier.apply
    wanted = 5
    applying = [False]

    def get(self: ObjectStore, kind: bytes, name: str) -> bytes:
        data = real_get(self, kind, name)
        if kind == b"blob":
            read.append("apply" if applying[0] else "before")
            if read.count("before") == wanted:
                all_read.set()
        return data

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}") == str(store.oplog.journal):
            assert all_read.wait(timeout=30), "the files were not read during the sync"
        real_fsync(fd)

    def apply(self: Applier, plan: object, **kw: bool) -> list[str]:
        applying[0] = True
        return real_apply(self, plan, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ObjectStore, "get", get)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(Applier, "apply", apply)
    store.rewind(cp.id)
    monkeypatch.undo()
    assert [(ws / f"d/f{i}").read_text() for i in range(5)] == [f"v1 {i}" for i in range(5)]
    assert read == ["before"] * wanted, read  # none read again while writing
