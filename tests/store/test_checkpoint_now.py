"""``Store.checkpoint_now``: the checkpoint a caller that must not block (the server's event
loop) may run, or None with nothing done when it would wait or walk."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store

from .swap_setup import replace_store


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


def test_a_file_grown_past_the_bound_after_its_look_is_read_only_as_far_as_it_was_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the look that admits a file under the byte bound is the one whose size the read
    # stops at: a file that grows right after it (an agent's log appended to) is not
    # read whole on the caller's thread. Two looks (a bound's, then the scan's own) read
    # what the second saw: 2 MiB on the server's event loop.
    from turnback.objects.objectstore import ObjectStore
    from turnback.store.checkpoint_ops import NOW_BYTES

    ws = _workspace(tmp_path / "ws")
    big = ws / "grows.log"
    big.write_bytes(b"x" * 1000)
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        big.write_bytes(b"y" * 1000)
        real_lstat = os.lstat
        grown: list[int] = []

        def lstat_then_grow(path: object, *args: object, **kwargs: object) -> os.stat_result:
            st = real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]
            if str(path).endswith("grows.log") and not grown:
                with open(big, "ab") as f:  # grown at the seam: right after the first look
                    f.write(b"z" * (2 * NOW_BYTES))
                grown.append(st.st_size)
            return st

        read: list[int] = []
        put_file = ObjectStore.put_file

        def counting(self: ObjectStore, path: str, size: int) -> str:
            read.append(size)
            return put_file(self, path, size)

        monkeypatch.setattr(os, "lstat", lstat_then_grow)
        monkeypatch.setattr(ObjectStore, "put_file", counting)
        cp = store.checkpoint_now({"grows.log"})
        monkeypatch.undo()
        assert grown == [1000]
        assert sum(read) <= NOW_BYTES
        assert cp is not None  # admitted at 1000 bytes: read as far as that
        content = store.file_content(cp.id, "grows.log")
        assert content.size == 1000 and content.text == "y" * 1000


def test_a_changed_ignore_file_is_none_and_no_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a changed .gitignore puts every path in question: the scan walks the whole
    # workspace, which a caller that must not block (the event loop) must not run
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        first = store.checkpoint()
        (ws / ".gitignore").write_text("f2.txt\n")
        listings = _calls(monkeypatch, store.scanner, "_list")
        assert store.checkpoint_now({".gitignore"}) is None
        assert listings == [] and _count(store) == 1
        cp = store.checkpoint(dirty={".gitignore"})  # the pool's checkpoint walks
        assert "" in [args[0] for args, _ in listings]
        # the walk applied the new rule: f2.txt is no longer kept
        assert {(c.path, c.status) for c in store.changes(first.id, cp.id)} == {
            (".gitignore", "added"), ("f2.txt", "deleted")}


def test_the_session_file_lock_held_by_another_process_is_none_and_nothing_done(
    tmp_path: Path,
) -> None:
    # A process stopped while it appends to the workspace session (^Z on a CLI append)
    # holds the session's file lock; the checkpoint's event would wait 30 s for it on the
    # server's event loop, then fail with the checkpoint already in the index.
    from turnback.store.session_ops import WORKSPACE_SESSION

    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        (ws / "f1.txt").write_text("changed\n")
        lock_path = str(store.backend.path(WORKSPACE_SESSION)) + ".lock"  # type: ignore[attr-defined]
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        answered = threading.Event()
        result: list[object] = []

        def run() -> None:
            try:
                result.append(store.checkpoint_now({"f1.txt"}))
            except Exception as exc:  # before the fix: Conflict after 30 s
                result.append(exc)
            answered.set()

        worker = threading.Thread(target=run)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            worker.start()
            assert answered.wait(5.0), "checkpoint_now waited for the session's file lock"
            assert result == [None]
            assert _count(store) == 1
        finally:
            os.close(fd)
            worker.join()
        assert store.checkpoint_now({"f1.txt"}) is not None  # free again: taken
        assert _count(store) == 2


Calls = list[tuple[tuple[Any, ...], dict[str, Any]]]


def _calls(monkeypatch: pytest.MonkeyPatch, obj: object, name: str) -> Calls:
    """Every call of ``obj.name`` from now on, with its arguments; each goes through."""
    calls: Calls = []
    real = getattr(obj, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(obj, name, recording)
    return calls


def test_a_gc_by_another_process_since_is_none_and_no_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a gc (the CLI's, another window's server) since this object's last checkpoint makes
    # its next scan walk the whole workspace (cached hashes may name removed objects):
    # on the server's event loop, a 50,000-file walk froze every folder's requests
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        (ws / "f0.txt").write_text("its first content is garbage once dropped\n")
        store.checkpoint(dirty={"f0.txt"})
        with Store.open(ws) as other:
            assert other.gc(keep_last=1).objects_removed > 0  # objects removed: the mark moves
        (ws / "f1.txt").write_text("changed\n")
        scans = _calls(monkeypatch, store.scanner, "scan")
        assert store.checkpoint_now({"f1.txt"}) is None
        assert scans == [] and _count(store) == 1
        cp = store.checkpoint(dirty={"f1.txt"})  # the pool's checkpoint walks, as before
        assert [kw.get("base") is None for _, kw in scans] == [True]
        assert store.file_content(cp.id, "f1.txt").text == "changed\n"


def test_paths_a_rewind_wrote_are_none_and_left_to_the_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the next checkpoint after a rewind looks again at every path the rewind wrote
    # (``_own_dirty``): thousands of them for a large rewind, which the count and byte
    # bounds of the few changed paths the caller passed never saw
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        first = store.checkpoint()
        for i in range(40):
            (ws / f"n{i}.txt").write_text(f"new {i}\n")
        store.checkpoint(dirty={f"n{i}.txt" for i in range(40)})
        store.rewind(first.id)
        store.save_scan_cache()
        assert store._own_dirty  # the rewind's 40 paths, still to look at again
        (ws / "f1.txt").write_text("changed\n")
        scans = _calls(monkeypatch, store.scanner, "scan")
        count = _count(store)
        assert store.checkpoint_now({"f1.txt"}) is None
        assert scans == [] and _count(store) == count
        cp = store.checkpoint(dirty={"f1.txt"})
        assert [len(kw["dirty"]) for _, kw in scans] == [41]
        assert store.file_content(cp.id, "f1.txt").text == "changed\n"


def test_the_gc_mark_and_the_root_are_looked_at_once_a_checkpoint(tmp_path: Path) -> None:
    # checkpoint_now looks at both under the gc lock it holds through the scan; the scan's
    # own _check_gc read them again (work done twice on the answer's path, branch atonce26)
    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        (ws / "f1.txt").write_text("changed\n")
        marks: list[str] = []
        roots: list[bool] = []
        real_gen, real_replaced = store._gc_generation, store._root_held.replaced

        def gen() -> str:
            marks.append(real_gen())
            return marks[-1]

        def replaced() -> bool:
            roots.append(real_replaced())
            return roots[-1]

        with mock.patch.object(store, "_gc_generation", gen), \
                mock.patch.object(store._root_held, "replaced", replaced):
            cp = store.checkpoint_now({"f1.txt"})
        assert cp is not None
        assert store.file_content(cp.id, "f1.txt").text == "changed\n"
        assert len(marks) == 1 and roots == [False]


# -- red-team pass over atonce26 (redteam31): the gc mark and the root looked at once ------


def _blocked_on(lock: Path) -> bool:
    """Whether a process waits for a flock on ``lock`` (``/proc/locks`` marks a waiter
    ``->``)."""
    ino = os.stat(lock).st_ino
    with open("/proc/locks") as f:
        return any("->" in row and f":{ino} " in row for row in f)


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux' /proc/locks")
def test_a_gc_of_another_process_started_in_the_scan_waits_for_the_commit(
        tmp_path: Path) -> None:
    # the scan no longer reads the gc mark again: a gc (the CLI's, any process) started
    # after checkpoint_now's look must wait on the gc lock until the checkpoint is
    # committed, and then keep its objects (sound before and after)
    import subprocess
    import sys

    from turnback.snapshot.scan import Scanner

    ws = _workspace(tmp_path / "ws")
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        (ws / "f1.txt").write_text("changed in the window\n")
        real = Scanner.scan
        gcs: list[subprocess.Popen[bytes]] = []

        def scan(self: Scanner, *a: Any, **kw: Any) -> Any:
            gcs.append(subprocess.Popen(
                [sys.executable, "-c", "import sys; from turnback import Store\n"
                 "with Store.open(sys.argv[1]) as s: s.gc(keep_last=1)", str(ws)],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}))
            lock = store.root / "locks" / "gc"
            for _ in range(2000):  # the gc is blocked on the lock this checkpoint holds
                if _blocked_on(lock) or gcs[0].poll() is not None:
                    break
                threading.Event().wait(0.005)
            assert gcs[0].poll() is None and _blocked_on(lock)
            return real(self, *a, **kw)

        with mock.patch.object(Scanner, "scan", scan):
            cp = store.checkpoint_now({"f1.txt"}, label="now")
        assert gcs[0].wait(60) == 0
        assert cp is not None
        assert [c.label for c in store.checkpoints()] == ["now"]  # keep_last=1
        assert store.file_content(cp.id, "f1.txt").text == "changed in the window\n"
        assert store.fsck().ok


@pytest.mark.parametrize("put", ["a link", "nothing", "an empty folder", "a copy"])
def test_the_store_swapped_in_the_scan_records_nothing_anywhere(
        tmp_path: Path, put: str) -> None:
    # the root's look is made once, before the scan: a store renamed away and something
    # put in its place after it (or after the look the scan made before atonce26, the
    # same window) is refused with an error, nothing written in the link's target, in
    # the folder in its place or in the moved store, which stays whole (sound before/after)
    import shutil

    from turnback.errors import TurnbackError
    from turnback.snapshot.scan import Scanner

    ws = _workspace(tmp_path / "ws")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.save_scan_cache()
        (ws / "f1.txt").write_text("changed\n")
        root, moved = store.root, tmp_path / "moved"
        real = Scanner.scan
        before: list[tuple[str, int]] = []

        def scan(self: Scanner, *a: Any, **kw: Any) -> Any:
            replace_store(root, moved, put, elsewhere)
            before.extend(_files(root))
            return real(self, *a, **kw)

        with mock.patch.object(Scanner, "scan", scan), pytest.raises(TurnbackError):
            store.checkpoint_now({"f1.txt"})
        assert list(elsewhere.iterdir()) == []
        assert _files(root) == before  # nothing written in what was put there
    if root.is_symlink():
        root.unlink()
    elif root.exists():
        shutil.rmtree(root)
    os.rename(moved, root)
    with Store.open(ws) as store:
        assert [c.label for c in store.checkpoints()] == ["walk"]
        assert store.fsck().ok


def _files(root: Path) -> list[tuple[str, int]]:
    if root.is_symlink() or not root.is_dir():
        return []
    return sorted((str(p.relative_to(root)), p.stat().st_size)
                  for p in root.rglob("*") if p.is_file())
