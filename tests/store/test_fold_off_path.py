"""The fold of a server's raw frames off every writer's path (branch ``fold28``): a
checkpoint asked during a fold does not wait for it, every object stays readable, only the
folding process's own log goes; raw frames a killed server left are folded by the next
server's first quiet moment (``Store.fold_left``); empty logs do not count toward a merge."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.fs.locks import rw_lock
from turnback.objects import packlog
from turnback.objects.merging import MERGE_AT
from wsutil import age_tree, write

WAIT_S = 20.0  # a bound on waiting for a condition, never a sleep


def _edit(ws: Path, tag: str, n: int = 10) -> dict[str, str]:
    files = {f"d{i}/f{i}.txt": f"{tag} line {i}\n" * 400 for i in range(n)}
    for rel, text in files.items():
        write(ws, rel, text)
    age_tree(ws)
    return files


def _logs(root: Path) -> list[Path]:
    return [root / "objects" / "log" / n for n in packlog.log_names(root / "objects" / "log")]


def _paused_fold(store: Store) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """A fold on a thread, held inside its pack's write until ``go`` is set."""
    inside, go = threading.Event(), threading.Event()
    objects = store.objects
    real = objects._rewrite

    def paused(*args: Any, **kwargs: Any) -> int:
        inside.set()
        assert go.wait(WAIT_S)
        return real(*args, **kwargs)

    objects._rewrite = paused  # type: ignore[method-assign]
    t = threading.Thread(target=store.fold_held)
    t.start()
    assert inside.wait(WAIT_S), "the fold did not reach its pack"
    return t, inside, go


def test_a_checkpoint_asked_during_a_fold_does_not_wait_for_it(ws: Path) -> None:
    """Fails before: the fold held the gc lock exclusively while it wrote and synced its
    pack, so the checkpoint (which holds it shared) waited for the whole fold (here, for
    ever: the fold is held inside its pack's write until the checkpoint is done)."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.objects.raw_held = True
        files = _edit(ws, "raw")
        cp = store.checkpoint(dirty=set(files), label="raw")
        t, _, go = _paused_fold(store)
        try:
            # every object readable while the fold writes its pack
            for rel, text in files.items():
                assert store.file_content(cp.id, rel).text == text
            done: list[str] = []
            after = _edit(ws, "during", 3)

            def checkpoint() -> None:
                done.append(store.checkpoint(dirty=set(after), label="during").id)

            c = threading.Thread(target=checkpoint)
            c.start()
            c.join(WAIT_S)
            assert done, "the checkpoint waited for the fold"
        finally:
            go.set()
            t.join(WAIT_S)
            c.join(WAIT_S)
        assert not t.is_alive()
        # after: both checkpoints whole, from this process and from another
        for rel, text in files.items():
            assert store.file_content(cp.id, rel).text == text
        for rel, text in after.items():
            assert store.file_content(done[0], rel).text == text
    with Store.open(ws) as other:
        assert {cp.id, done[0]} <= {c.id for c in other.checkpoints()}
        for rel, text in {**files, **after}.items():
            want = after.get(rel, text)
            assert other.file_content(done[0], rel).text == want
        assert other.fsck().ok
    # the log folded is gone; the checkpoint made during the fold is in the next one
    assert sum(1 for p in _logs(root) if p.stat().st_size) == 1


def test_a_fold_takes_its_own_log_only(ws: Path) -> None:
    """Fails before: the fold merged every log, another live writer's too (under the
    exclusive lock); now only its own (which keeps its step short and needs no
    exclusive lock: another's log may be mid-append)."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
        _edit(ws, "cli", 2)
        with Store.open(ws) as cli:
            cli.checkpoint(label="cli")
            [cli_log] = [p for p in _logs(root) if p.stat().st_size]
        store.objects.raw_held = True
        files = _edit(ws, "raw")
        cp = store.checkpoint(dirty=set(files), label="raw")
        assert store.fold_held() is True
        assert cli_log.exists() and cli_log.stat().st_size
        assert [p for p in _logs(root) if p.stat().st_size] == [cli_log]
        for rel, text in files.items():
            assert store.file_content(cp.id, rel).text == text


def test_a_second_fold_at_once_is_put_off_and_a_writer_does_not_hold_one_off(
        ws: Path) -> None:
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.objects.raw_held = True
        _edit(ws, "raw")
        store.checkpoint(label="raw")
        with rw_lock(root / "locks" / "fold", exclusive=True):  # another process folds
            assert store.fold_held() is False
        assert store.objects.unfolded
        with rw_lock(root / "locks" / "gc", exclusive=False):  # a writer appends
            assert store.fold_held() is True
        assert not store.objects.unfolded


def _kill_before_fold(ws: Path, tag: str) -> tuple[str, dict[str, str]]:
    """A server's checkpoint whose raw frames stay (the server killed before its fold)."""
    store = Store.open(ws)
    store.objects.raw_held = True
    files = _edit(ws, tag)
    cp = store.checkpoint(dirty=None, label=tag)
    log = store.objects._log
    assert log is not None
    store.objects._log = None  # as a SIGKILL: the log stays as written
    log.close()
    store.close()
    return cp.id, files


def test_raw_frames_a_killed_server_left_are_folded_by_the_next_servers_look(
        ws: Path) -> None:
    """Fails before (no ``fold_left``): a server starting on a store holding another's
    raw frames did not fold them until its own first raw write."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
    cp, files = _kill_before_fold(ws, "killed")
    raw_logs = [p for p in _logs(root) if packlog.holds_raw(p)]
    assert raw_logs
    with Store.open(ws) as server:
        assert server.fold_left() is True
        assert not any(packlog.holds_raw(p) for p in _logs(root))
        assert server.fold_left() is False  # nothing left: one look, no merge
        for rel, text in files.items():
            assert server.file_content(cp, rel).text == text
        with rw_lock(root / "locks" / "gc", exclusive=False):
            _kill_before_fold(ws, "again")
            assert server.fold_left() is None  # a writer holds the gc lock: tried again


def _plant_empty_logs(root: Path, n: int, age_s: float = 0.0) -> list[Path]:
    out = []
    for _ in range(n):
        p = root / "objects" / "log" / f"log-{os.getpid()}-{os.urandom(8).hex()}"
        p.touch(mode=0o600)
        if age_s:
            t = time.time() - age_s
            os.utime(p, (t, t))
        out.append(p)
    return out


def test_empty_logs_do_not_count_toward_a_merge(ws: Path) -> None:
    """Fails before: 16 empty logs (made ahead by writers killed before their first
    frame) and one with a frame were 17 logs, past ``MERGE_AT``: every CLI call merged."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
        _edit(ws, "one", 2)
        store.checkpoint(label="one")
    empty = _plant_empty_logs(root, MERGE_AT)
    with Store.open(ws) as cli:
        assert cli.merge_logs() is None
    assert all(p.exists() for p in empty)  # young: a live writer's, maybe
    assert sum(1 for p in _logs(root) if p.stat().st_size) == 1


def test_empty_logs_older_than_an_hour_are_removed_without_a_merge(ws: Path) -> None:
    root = ws / ".turnback"
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
        _edit(ws, "one", 2)
        store.checkpoint(label="one")
    old = _plant_empty_logs(root, MERGE_AT, age_s=7200)
    young = _plant_empty_logs(root, 1)
    with Store.open(ws) as cli:
        assert cli.merge_logs() is None
    assert not any(p.exists() for p in old)
    assert all(p.exists() for p in young)
    assert sum(1 for p in _logs(root) if p.stat().st_size) == 1


def test_two_servers_folding_and_a_gc_at_once_lose_nothing(ws: Path) -> None:
    """Two stores on one workspace (two servers) each checkpoint and fold in a loop while a
    third collects garbage: every checkpoint's files read back, fsck clean."""
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
    made: dict[str, dict[str, str]] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def server(tag: str) -> None:
        try:
            with Store.open(ws) as s:
                s.objects.raw_held = True
                for k in range(6):
                    with lock:  # one edit and its checkpoint at a time: the files are shared
                        files = _edit(ws, f"{tag}{k}", 4)
                        made[s.checkpoint(label=f"{tag}{k}").id] = files
                    s.fold_held()
        except BaseException as exc:  # reported below
            errors.append(exc)

    def collector() -> None:
        try:
            with Store.open(ws) as s:
                for _ in range(3):
                    s.gc()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=server, args=(t,)) for t in ("a", "b")]
    threads.append(threading.Thread(target=collector))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(made) == 12
    with Store.open(ws) as other:
        for cp, files in made.items():
            for rel, text in files.items():
                assert other.file_content(cp, rel).text == text
        assert other.fsck().ok
