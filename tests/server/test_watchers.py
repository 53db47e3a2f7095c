"""Both workspace watchers (inotify read on demand, watchfiles' thread): what a flush
guarantees, which store files count, and the cases where the next checkpoint must walk."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from turnback.server.watching import inotify_watch
from turnback.server.watching.dirty import DirtyTracker
from turnback.server.watching.inotify_watch import InotifyWatcher
from turnback.server.watching.watch import FolderWatcher, Watcher
from turnback.server.watching.watchers import make_watcher

KINDS = ["inotify", "watchfiles"]
Changes = list[tuple[set[str], bool]]


def _write(p: Path, text: str = "x") -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _until(cond: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for rel in ("a/b.txt", "a/deep/c.txt", "x.txt", ".git/HEAD"):
        _write(ws / rel, rel)
    (ws / ".turnback" / "sessions").mkdir(parents=True)  # the store (watchfiles flushes through it)
    return ws


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "inotify" and not inotify_watch.available():
        pytest.skip("no inotify on this system")
    return str(request.param)


@pytest.fixture
def watched(kind: str, ws: Path) -> Iterator[tuple[Watcher, DirtyTracker, Changes]]:
    tracker = DirtyTracker()
    changes: Changes = []
    cls = InotifyWatcher if kind == "inotify" else FolderWatcher
    w = cls(ws, ws / ".turnback", tracker, lambda s, c: changes.append((set(s), c)))
    w.start()
    try:
        assert w.wait_ready(10), "the watcher did not start"
        assert tracker.take().paths is None  # the walk that makes the set trusted
        yield w, tracker, changes
    finally:
        w.stop()


def _quiet(w: Watcher) -> None:
    """Until every change made so far has been handled and its store changes reported."""
    assert w.flush(), "a ready watcher confirms a flush"


def _flushed(w: Watcher, tracker: DirtyTracker) -> frozenset[str]:
    assert w.flush(), "a ready watcher confirms a flush"
    paths = tracker.take().paths
    assert paths is not None, "the set stays trusted"
    return paths


def test_a_flush_holds_every_change_made_before_it(
    watched: tuple[Watcher, DirtyTracker, Changes], ws: Path
) -> None:
    w, tracker, _ = watched
    (ws / "a/deep/c.txt").write_text("changed")
    _write(ws / "a/new.txt")
    (ws / "x.txt").unlink()
    os.chmod(ws / "a/b.txt", 0o755)
    os.symlink("b.txt", ws / "a/link")
    (ws / ".git/HEAD").write_text("ref: elsewhere")
    got = _flushed(w, tracker)
    assert {"a/deep/c.txt", "a/new.txt", "x.txt", "a/b.txt", "a/link"} <= got
    assert not any(p == ".git" or p.startswith(".git/") for p in got)
    assert _flushed(w, tracker) == frozenset(), "taken paths are not handed out twice"


def test_a_new_folder_is_reported_and_then_watched(
    watched: tuple[Watcher, DirtyTracker, Changes], ws: Path
) -> None:
    w, tracker, _ = watched
    _write(ws / "n/m/first.txt")  # made before any watch can be on n/ or n/m/
    got = _flushed(w, tracker)
    assert "n" in got or "n/m" in got or "n/m/first.txt" in got
    _write(ws / "n/m/later.txt")
    assert "n/m/later.txt" in _flushed(w, tracker)


def test_a_folder_moved_in_is_reported_and_then_watched(
    watched: tuple[Watcher, DirtyTracker, Changes], ws: Path, tmp_path: Path
) -> None:
    w, tracker, _ = watched
    _write(tmp_path / "outside/sub/f.txt")
    os.rename(tmp_path / "outside", ws / "moved")
    assert "moved" in _flushed(w, tracker)
    _write(ws / "moved/sub/g.txt")
    assert "moved/sub/g.txt" in _flushed(w, tracker)
    os.rename(ws / "moved", ws / "a/renamed")
    got = _flushed(w, tracker)
    assert {"moved", "a/renamed"} <= got
    _write(ws / "a/renamed/sub/h.txt")  # under its new name
    assert "a/renamed/sub/h.txt" in _flushed(w, tracker)


def test_only_session_and_checkpoint_files_of_the_store_count(
    watched: tuple[Watcher, DirtyTracker, Changes], ws: Path
) -> None:
    w, tracker, changes = watched
    store = ws / ".turnback"
    # A file's creation and its write may come in separate batches, each reported:
    # counts are taken once a flush has seen every event so far handled and reported.
    _write(store / "sessions" / "s1.jsonl", "{}\n")
    _quiet(w)
    assert any("s1" in s for s, _ in changes), changes
    changes.clear()
    _write(store / "checkpoints.jsonl", "{}\n")
    _quiet(w)
    assert any(c for _, c in changes), changes
    seen = len(changes)
    _write(store / "objects" / "pack" / "pack-1.pack", "x")
    _write(store / "index" / "summaries.json", "{}")
    _quiet(w)
    assert len(changes) == seen, "objects and caches are not news"
    assert not any(p.startswith(".turnback") for p in _flushed(w, tracker)), "nor dirty paths"


def test_a_store_made_inside_the_workspace_later_is_watched(tmp_path: Path) -> None:
    if not inotify_watch.available():
        pytest.skip("no inotify on this system")
    ws = tmp_path / "ws"
    _write(ws / "f.txt")
    changes: Changes = []
    w = InotifyWatcher(ws, ws / ".turnback", DirtyTracker(), lambda s, c: changes.append((s, c)))
    w.start()
    try:
        assert w.wait_ready(10) and w.covers_store()
        _write(ws / ".turnback" / "sessions" / "early.jsonl", "{}\n")  # before any watch on it
        assert _until(lambda: any("early" in s for s, _ in changes)), changes
        _write(ws / ".turnback" / "sessions" / "later.jsonl", "{}\n")
        assert _until(lambda: any("later" in s for s, _ in changes)), changes
    finally:
        w.stop()


@pytest.fixture
def inotify_watched(ws: Path) -> Iterator[tuple[InotifyWatcher, DirtyTracker]]:
    if not inotify_watch.available():
        pytest.skip("no inotify on this system")
    tracker = DirtyTracker()
    w = InotifyWatcher(ws, ws / ".turnback", tracker, lambda s, c: None)
    w.start()
    try:
        assert w.wait_ready(10)
        tracker.take()
        yield w, tracker
    finally:
        w.stop()


def test_a_folder_moved_out_is_no_longer_watched(
    inotify_watched: tuple[InotifyWatcher, DirtyTracker], ws: Path, tmp_path: Path
) -> None:
    w, tracker = inotify_watched
    before = len(w._dirs)
    os.rename(ws / "a", tmp_path / "a-out")  # a/ and a/deep/ leave the workspace
    assert "a" in _flushed(w, tracker)
    assert len(w._dirs) == before - 2
    _write(tmp_path / "a-out" / "deep" / "elsewhere.txt")
    assert _flushed(w, tracker) == frozenset(), "nothing outside the workspace is reported"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_queue_overflow_makes_the_next_checkpoint_walk(ws: Path) -> None:
    if not inotify_watch.available():
        pytest.skip("no inotify on this system")
    from inotify_simple import Event

    tracker = DirtyTracker()
    resets: list[None] = []
    w = InotifyWatcher(ws, ws / ".turnback", tracker, lambda s, c: None,
                       on_reset=lambda: resets.append(None))
    w.start()
    try:
        assert w.wait_ready(10)
        tracker.take()
        started = len(resets)
        ino = w._ino
        assert ino is not None
        real = ino.read
        ino.read = lambda timeout=None: [Event(-1, 0x4000, 0, ""), *real(timeout=timeout)]
        assert w.flush()
        assert tracker.take().paths is None, "events were lost: walk"
        # a session file's change may be among the lost: the kept session listing is dropped
        assert len(resets) > started
    finally:
        w.stop()


def test_the_workspace_folder_going_away_makes_the_next_checkpoint_walk(
    watched: tuple[Watcher, DirtyTracker, Changes], ws: Path, kind: str
) -> None:
    w, tracker, _ = watched
    if kind == "watchfiles":
        pytest.skip("watchfiles reports the loss on its own schedule")
    shutil.rmtree(ws)
    w.flush()
    assert tracker.take().paths is None
    ws.mkdir()
    assert _until(lambda: w.ready), "the watcher comes back when the folder does"


def test_make_watcher_picks_inotify_on_linux_unless_told(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = (ws, ws / ".turnback", DirtyTracker(), lambda s, c: None)
    monkeypatch.setenv("TURNBACK_WATCHER", "watchfiles")
    assert isinstance(make_watcher(*args), FolderWatcher)
    monkeypatch.delenv("TURNBACK_WATCHER")
    expected = InotifyWatcher if inotify_watch.available() else FolderWatcher
    assert isinstance(make_watcher(*args), expected)


async def test_the_server_on_the_watchfiles_watcher_checkpoints_what_changed(
    tmp_path: Path,
) -> None:
    """The portable watcher (macOS, Windows) still drives incremental checkpoints."""
    from .conftest import make_workspace, started

    ws = make_workspace(tmp_path / "ws")
    async with started(ws, TURNBACK_WATCHER="watchfiles") as client:
        await client.wait_watching()
        await client.call("turnback/createCheckpoint", {})
        for i in range(5):
            _write(ws / f"d{i}" / "deep" / "f.txt", str(i))
            (ws / "src" / "app.py").write_text(f"v{i}\n")
            res = await client.call("turnback/createCheckpoint", {})
            assert res["incremental"] is True
            got = await client.call(
                "turnback/fileContent",
                {"checkpoint": res["checkpoint"]["id"], "path": f"d{i}/deep/f.txt"},
            )
            assert got["text"] == str(i)
