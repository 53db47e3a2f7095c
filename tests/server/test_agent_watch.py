"""The watch of agents' folders: appended, new, replaced files and folders that appear later."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback.importers.live import WatchRoot
from turnback.server.watching.agent_watch import AgentWatch

from . import agent_watching
from .agent_watching import Reported

backend = agent_watching.backend  # the fixture: each test with each watch backend


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def started(roots: list[WatchRoot], home: Path) -> tuple[AgentWatch, Reported]:
    seen = Reported()
    watch = AgentWatch(roots, seen, limit=home)
    watch.start()
    assert watch.ready.wait(10)
    return watch, seen


@pytest.fixture
def stop() -> Iterator[list[AgentWatch]]:
    watches: list[AgentWatch] = []
    yield watches
    for w in watches:
        w.stop()


def test_appends_and_new_files_are_reported(backend: str, home: Path,
                                            stop: list[AgentWatch]) -> None:
    root = home / ".claude" / "projects" / "p"
    root.mkdir(parents=True)
    f = root / "s.jsonl"
    f.write_text("{}\n")
    watch, seen = started([WatchRoot(root)], home)
    stop.append(watch)
    with f.open("a") as fh:
        fh.write('{"a": 1}\n')
    seen.wait_for(lambda p: f in p)
    seen.clear()
    g = root / "t.jsonl"
    g.write_text("{}\n")
    seen.wait_for(lambda p: g in p)


def test_replaced_file_is_reported(backend: str, home: Path, stop: list[AgentWatch]) -> None:
    root = home / "r"
    root.mkdir()
    f = root / "s.jsonl"
    f.write_text("{}\n")
    watch, seen = started([WatchRoot(root)], home)
    stop.append(watch)
    tmp = root / "s.jsonl.tmp"
    tmp.write_text("{}\n{}\n")
    os.replace(tmp, f)
    seen.wait_for(lambda p: f in p)


def test_a_root_made_later_is_watched(backend: str, home: Path, stop: list[AgentWatch]) -> None:
    root = home / ".claude" / "projects" / "-ws"  # Claude Code makes it at its first session
    watch, seen = started([WatchRoot(root, recursive=True)], home)
    stop.append(watch)
    root.mkdir(parents=True)
    f = root / "s.jsonl"
    f.write_text("{}\n")
    # the folder's appearance or the file itself is reported (the follower looks again)
    seen.wait_for(lambda p: f in p or root in p)
    seen.clear()
    with f.open("a") as fh:
        fh.write("{}\n")
    seen.wait_for(lambda p: f in p)


def test_recursive_root_sees_new_date_folders(backend: str, home: Path,
                                              stop: list[AgentWatch]) -> None:
    root = home / ".codex" / "sessions"
    root.mkdir(parents=True)
    watch, seen = started([WatchRoot(root, recursive=True)], home)
    stop.append(watch)
    day = root / "2026" / "11" / "25"
    day.mkdir(parents=True)
    f = day / "rollout-x.jsonl"
    f.write_text("{}\n")
    if backend == "inotify":
        # the file itself, not only its new folders: each is watched before it is listed,
        # so a file written before its folder's watch was laid is still reported
        seen.wait_for(lambda p: f in p)
    else:
        # watchfiles may name only the new folder (the follower then looks there again)
        seen.wait_for(lambda p: any(x == f or x in f.parents for x in p))
    # later appends in the new folder are reported (once its watch is laid: until then an
    # append may go unseen by watchfiles, so append again until one is reported)
    deadline = time.monotonic() + 30
    while True:
        seen.clear()
        with f.open("a") as fh:
            fh.write("{}\n")
        try:
            seen.wait_for(lambda p: f in p, timeout=1.0)
            break
        except AssertionError:
            assert time.monotonic() < deadline, "no append in the new folder was reported"


def test_linked_folders_are_not_watched_into(home: Path, tmp_path: Path,
                                             stop: list[AgentWatch]) -> None:
    if not AgentWatch.inotify():
        pytest.skip("no inotify here")
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    root = home / ".codex" / "sessions"
    root.mkdir(parents=True)
    (root / "link").symlink_to(secret, target_is_directory=True)
    watch, _ = started([WatchRoot(root, recursive=True)], home)
    stop.append(watch)
    assert root / "link" not in watch.watched and secret not in watch.watched
    assert watch.watched == {root}


def test_stop_is_prompt(home: Path) -> None:
    watch, _ = started([WatchRoot(home)], home)
    t0 = time.monotonic()
    watch.stop()
    assert time.monotonic() - t0 < 5


def test_a_process_holding_many_descriptors_still_watches(home: Path,
                                                          stop: list[AgentWatch]) -> None:
    """With 1,100 descriptors open (a long-lived server, a process holding many stores),
    the watcher's own get numbers past 1,024, which ``select`` refused: the watch fell back
    to re-reads. It waits with ``poll`` now (``fs/ready.py``) and reports as usual."""
    import resource

    if not AgentWatch.inotify():
        pytest.skip("no inotify here")
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        pytest.skip(f"this process may open {soft} descriptors, the test needs 1,200")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        root = home / "many"
        root.mkdir()
        f = root / "s.jsonl"
        f.write_text("{}\n")
        watch, seen = started([WatchRoot(root)], home)
        stop.append(watch)
        with f.open("a") as fh:
            fh.write('{"a": 1}\n')
        seen.wait_for(lambda p: f in p)
    finally:
        for fd in held:
            os.close(fd)
