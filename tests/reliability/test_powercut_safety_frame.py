"""A power cut during the one disk wait before a rewind changes a file: a small safety
checkpoint's log frame (which holds its record) and the journal are synced together, so
either may land without the other; its line in ``checkpoints.jsonl`` is written only after
that wait. Each outcome must leave, after the next open, the workspace as before or as the
target, an undo that brings back the state before, and never a journal applied whose safety
checkpoint's objects are lost (docs/FORMAT.md, "Rewind journal and operation log")."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Conflict
from turnback.rewind import oplog
from wsutil import journal_left, picture, write

from .test_crash_journal_steps import _prepared, stop_before_apply


def _logs(store_dir: Path) -> dict[Path, int]:
    folder = store_dir / "objects" / "log"
    return {p: p.stat().st_size for p in folder.iterdir()} if folder.is_dir() else {}


def _cut_in_the_wait(ws: Path, keep_frame: bool, keep_journal: bool,
                     write_one: bool = False) -> tuple[dict[str, bytes], str]:
    """A rewind stopped as its files were about to change, then its store files put back
    to what a power cut during its one wait could leave: the frame (and the
    ``checkpoints.jsonl`` line written after the wait) or the journal, each kept or lost.
    Returns the workspace's picture before and the safety checkpoint's id."""
    cp, _a, b = _prepared(ws)
    store = Store.open(ws)
    index = store.index.path.read_bytes()
    logs = _logs(store.root)
    stop_before_apply(store, ws, cp, write_one)
    pending = store.oplog.pending()
    assert pending is not None
    safety = str(pending["safety"])
    assert safety.encode() in store.index.path.read_bytes()
    store.index.path.write_bytes(index)  # the line, written unsynced after the wait, lost
    if not keep_frame:
        for log in _logs(store.root):
            if log in logs:
                with open(log, "r+b") as f:
                    f.truncate(logs[log])
            else:
                log.unlink()
    if not keep_journal:
        store.oplog.journal.write_bytes(b"")
    return b, safety


def test_frame_lost_journal_kept_no_file_changed_the_rewind_never_began(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    before, safety = _cut_in_the_wait(ws, keep_frame=False, keep_journal=True)
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert not journal_left(again.root)
        assert picture(ws) == before
        assert again.index.get(safety) is None  # its objects are gone with it
        assert again.log()[-1]["op"] == "undo"  # the cut rewind was never recorded
        assert again.fsck().ok, again.fsck().damaged


def test_frame_lost_journal_kept_a_file_changed_is_refused_and_named(tmp_path: Path) -> None:
    """Not what a cut in the wait can leave (no file changes before it returns), but a
    journal naming a safety checkpoint whose objects are lost is never applied."""
    ws = tmp_path / "ws"
    _before, safety = _cut_in_the_wait(ws, keep_frame=False, keep_journal=True,
                                       write_one=True)
    with Store.open(ws) as again:
        assert again.journal_problem is not None
        assert safety in again.journal_problem and "safety checkpoint" in again.journal_problem
        assert journal_left(again.root)
        assert (ws / "a.txt").read_text() == "one\n"  # nothing applied, nothing undone


def test_frame_kept_journal_lost_the_safety_checkpoint_comes_back_and_nothing_changes(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    before, safety = _cut_in_the_wait(ws, keep_frame=True, keep_journal=False)
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert not journal_left(again.root)
        assert picture(ws) == before
        assert again.index.get(safety) is not None  # put back from its frame
        assert again.log()[-1]["op"] == "undo"
        assert again.fsck().ok, again.fsck().damaged


@pytest.mark.parametrize("write_one", [True, False])
def test_both_kept_the_rewind_is_carried_to_its_target_and_undone(
        tmp_path: Path, write_one: bool) -> None:
    """Carried to its target once a file shows it (``write_one``); with none touched, the
    journal is emptied and nothing applied (trust37: it was carried there too)."""
    ws = tmp_path / "ws"
    before, safety = _cut_in_the_wait(ws, keep_frame=True, keep_journal=True,
                                      write_one=write_one)
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert again.index.get(safety) is not None
        assert not journal_left(again.root)
        if not write_one:
            assert picture(ws) == before and again.log()[-1]["op"] != "rewind"
            return
        assert picture(ws) != before and again.log()[-1]["op"] == "rewind"
        again.undo()
        assert picture(ws) == before
        assert again.fsck().ok, again.fsck().damaged


def test_the_safety_line_and_stat_cache_wait_for_the_frame_and_journal(
        tmp_path: Path) -> None:
    """The one wait syncs the journal with the frame's log, and nothing outside the frame
    names the safety checkpoint before it returns."""
    ws = tmp_path / "ws"
    cp, _a, _b = _prepared(ws)
    seen: list[tuple[list[str], bool, bool]] = []
    real = oplog.fsync_all

    def watch(files: list[Path], dirs: list[Path] = [], **kw: object) -> None:  # noqa: B006
        listed = store.index.path.read_bytes()
        journal = store.oplog.journal.read_bytes()
        safety = str(oplog.loads(journal)["safety"]).encode()
        cache = store.root / "cache"
        cached = any(p.stat().st_mtime_ns > started for p in cache.rglob("*") if p.is_file())
        seen.append(([p.parent.name for p in files], safety in listed, cached))
        real(files, dirs, **kw)  # type: ignore[arg-type]

    with Store.open(ws) as store:
        write(ws, "a.txt", "three\n")
        started = max(p.stat().st_mtime_ns for p in (store.root / "cache").rglob("*")
                      if p.is_file())
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(oplog, "fsync_all", watch)
            store.rewind(cp)
    assert len(seen) == 1, seen
    folders, listed, cached = seen[0]
    assert "log" in folders  # the frame's log, synced in the journal's wait
    assert not listed, "checkpoints.jsonl named the safety checkpoint before the wait"
    assert not cached, "the stat cache was saved before the wait"


def test_a_rewind_refused_at_its_journal_keeps_its_safety_checkpoint_listed(
        tmp_path: Path) -> None:
    """The journal's write refused (another process's rewind left pending): the safety
    checkpoint, already written to its frame, is synced and listed as a checkpoint is."""
    ws = tmp_path / "ws"
    cp, _a, _b = _prepared(ws)
    with Store.open(ws) as store:
        before = {c.id for c in store.checkpoints()}
        store.oplog.journal.write_bytes(b'{"id": "0123456789abcdef"}\n')
        with pytest.raises(Conflict, match="another process left unfinished"):
            store.rewind(cp)
        new = [c for c in store.checkpoints() if c.id not in before]
        assert len(new) == 1 and new[0].label.startswith("before rewind"), new
        assert store.read_file(new[0].id, "src/b.py") == b"print(2)\n"  # its objects are readable
