"""``Store.checkpoint_now``: the checkpoint a caller that must not block (the server's event
loop) may run, or None with nothing done when it would wait or walk."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import pytest

from turnback import Store


def _workspace(ws: Path) -> Path:
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    return ws


def _count(store: Store) -> int:
    return len(store.checkpoints())


def test_a_small_checkpoint_is_taken_as_checkpoint_takes_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        (ws / "f1.txt").write_text("changed\n")
        cp = store.checkpoint_now({"f1.txt"}, label="now")
        assert cp is not None and cp.label == "now"
        assert store.file_content(cp.id, "f1.txt").text == "changed\n"
        assert [c.id for c in store.checkpoints()][-1] == cp.id
        store.save_scan_cache()
        (ws / "f2.txt").write_text("again\n")
        again = store.checkpoint(dirty={"f2.txt"})  # builds on it as on any checkpoint
        assert store.file_content(again.id, "f1.txt").text == "changed\n"
        assert store.file_content(again.id, "f2.txt").text == "again\n"


def test_no_scan_to_build_on_is_none_and_nothing_done(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
    with Store.open(ws) as store:  # a new open: the next checkpoint walks
        (ws / "f1.txt").write_text("changed\n")
        assert store.checkpoint_now({"f1.txt"}) is None
        assert _count(store) == 1


def test_the_gc_lock_held_by_another_process_is_none_and_nothing_done(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        (ws / "f1.txt").write_text("changed\n")
        # another open file description: to flock, another process (a gc holds it so)
        fd = os.open(store.root / "locks" / "gc", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            assert store.checkpoint_now({"f1.txt"}) is None
            assert _count(store) == 1
        finally:
            os.close(fd)
        assert store.checkpoint_now({"f1.txt"}) is not None  # free again: taken
        assert _count(store) == 2


def test_the_mutex_held_by_another_thread_is_none(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        (ws / "f1.txt").write_text("changed\n")
        held, done = threading.Event(), threading.Event()

        def hold() -> None:
            with store._mutex:
                held.set()
                done.wait(10)

        t = threading.Thread(target=hold)
        t.start()
        try:
            assert held.wait(10)
            assert store.checkpoint_now({"f1.txt"}) is None
        finally:
            done.set()
            t.join()
        assert _count(store) == 1


def test_an_unsaved_stat_cache_is_left_to_the_waiting_checkpoint(tmp_path: Path) -> None:
    """Saving it takes the gc lock waiting: ``checkpoint`` saves it first, this does not."""
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        (ws / "f1.txt").write_text("changed\n")
        assert store.checkpoint_now({"f1.txt"}) is not None
        (ws / "f2.txt").write_text("changed\n")
        assert store.checkpoint_now({"f2.txt"}) is None
        store.save_scan_cache()
        assert store.checkpoint_now({"f2.txt"}) is not None
        assert _count(store) == 3


def test_bad_input_is_refused_as_checkpoint_refuses_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        with pytest.raises(Exception, match="no-such-session"):
            store.checkpoint_now({"f1.txt"}, session_id="no-such-session")
        assert _count(store) == 1


def test_a_folder_among_the_changed_paths_is_none_and_nothing_done(tmp_path: Path) -> None:
    # a tree moved in is one changed path, and its scan reads every file under it
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        (ws / "moved_in" / "deep").mkdir(parents=True)
        for i in range(5):
            (ws / "moved_in" / "deep" / f"g{i}.txt").write_text(f"g {i}\n")
        assert store.checkpoint_now({"moved_in"}) is None
        assert _count(store) == 1
        cp = store.checkpoint(dirty={"moved_in"})  # the pool's checkpoint takes it
        assert store.file_content(cp.id, "moved_in/deep/g4.txt").text == "g 4\n"


def test_changed_files_past_the_byte_bound_are_none_and_nothing_done(tmp_path: Path) -> None:
    from turnback.store.checkpoint_ops import NOW_BYTES

    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        half = NOW_BYTES // 2 + 1
        (ws / "a.bin").write_bytes(b"a" * half)
        (ws / "b.bin").write_bytes(b"b" * half)
        assert store.checkpoint_now({"a.bin", "b.bin"}) is None  # together past it
        assert _count(store) == 1
        cp = store.checkpoint_now({"a.bin", "gone.txt"})  # one alone, and a path gone
        assert cp is not None and _count(store) == 2
        assert store.file_content(cp.id, "a.bin").size == half
