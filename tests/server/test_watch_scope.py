"""What the Linux watcher watches: only the folders a checkpoint keeps (ignored ones cost
no watch), re-judged when an ignore file changes; and what happens at the kernel's limit
(``ENOSPC``, ``EMFILE``, injected here, never by changing the machine's limits): no
change is missed, the unwatched folders are walked by every checkpoint, and it is said.

Each runs twice where it can: with the watcher listing every folder to lay its watches
("own-listing"), and as the server runs it, with the first walk laying them ("walk-lays")."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.server.watching import inotify_watch
from turnback.server.watching.dirty import DirtyTracker
from turnback.server.watching.inotify_watch import InotifyWatcher
from turnback.server.workspace.folders import Folder, with_dirty
from turnback.server.workspace.settings import Settings
from turnback.store import watchlimit
from wsutil import run_cli

if not inotify_watch.available():  # pragma: no cover - Linux has it
    pytest.skip("no inotify on this system", allow_module_level=True)


def _write(p: Path, text: str = "x") -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def tree(ws: Path) -> Path:
    """A workspace with an ignored node_modules/ of nested folders, an ignored build/
    (.turnbackignore), a folder ignored by git's info/exclude, and tracked folders."""
    _write(ws / ".gitignore", "node_modules/\n")
    _write(ws / ".turnbackignore", "build/\n")
    _write(ws / ".git" / "info" / "exclude", "scratch/\n")
    _write(ws / ".git" / "HEAD", "ref: refs/heads/main\n")
    for i in range(30):
        _write(ws / "node_modules" / f"p{i}" / "lib" / "deep" / "x.js")
    _write(ws / "build" / "out" / "a.o")
    _write(ws / "scratch" / "notes" / "n.txt")
    for rel in ("src/app.py", "src/gen/g.py", "docs/a.md", "docs/img/x.png"):
        _write(ws / rel)
    return ws


TRACKED = {"", "src", "src/gen", "docs", "docs/img"}


class Harness:
    def __init__(self, ws: Path, store: Store, walk_lays: bool = False) -> None:
        self.ws, self.store = ws, store
        self.tracker = DirtyTracker()
        self.watcher = InotifyWatcher(ws, Path(store.root), self.tracker, lambda s, c: None)
        self.watcher.walk_lays = walk_lays
        self.folder = Folder(ws.as_uri(), ws, Settings())
        self.folder.tracker, self.folder.watcher = self.tracker, self.watcher
        self.folder.store = store

    def flush(self) -> None:
        assert self.watcher.flush(), "a ready watcher confirms a flush"

    def checkpoint(self) -> tuple[bool, Any]:
        """A checkpoint as the server makes one (``with_dirty``): with the watcher's paths
        when trusted, else a walk (which lays the watches of a watcher waiting for one)."""
        cp, ticket = with_dirty(self.folder, lambda dirty: self.store.checkpoint(dirty=dirty))
        return ticket.paths is not None, cp

    def has(self, cp: Any, rel: str, text: str = "x") -> bool:
        return self.store.read_file(cp.id, rel) == text.encode()


@pytest.fixture(params=[False, True], ids=["own-listing", "walk-lays"])
def walk_lays(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def harness(tree: Path, walk_lays: bool) -> Iterator[Harness]:
    store = Store.open(tree, create=True)
    h = Harness(tree, store, walk_lays)
    h.watcher.start()
    try:
        assert h.watcher.wait_ready(10)
        incremental, _ = h.checkpoint()
        assert not incremental, "the first checkpoint walks"
        yield h
    finally:
        h.watcher.stop()
        store.close()


def test_ignored_folders_get_no_watch(harness: Harness) -> None:
    w = harness.watcher
    assert w.watched_folders() == TRACKED
    # the workspace's tracked folders, the store's top and sessions/, git's info/
    assert w.watch_count == len(TRACKED) + 3
    assert w.limit is None


def test_an_ignore_rule_edit_moves_the_watches(harness: Harness) -> None:
    w, ws = harness.watcher, harness.ws
    (ws / ".gitignore").write_text("node_modules/\nsrc/gen/\n")
    harness.flush()
    assert w.watched_folders() == TRACKED - {"src/gen"}
    (ws / ".gitignore").write_text("")  # node_modules/ is tracked now: 30 × 3 folders more
    harness.flush()
    expected = TRACKED | {"node_modules"} | {
        f"node_modules/p{i}{sub}" for i in range(30) for sub in ("", "/lib", "/lib/deep")}
    assert w.watched_folders() == expected
    _, cp = harness.checkpoint()  # the paths hold .gitignore: the scanner reads everything
    assert harness.has(cp, "node_modules/p7/lib/deep/x.js")
    _write(ws / "node_modules/p3/lib/deep/new.js", "n")
    _write(ws / "src/gen/later.py", "l")
    incremental, cp = harness.checkpoint()
    assert incremental
    assert harness.has(cp, "node_modules/p3/lib/deep/new.js", "n")
    assert harness.has(cp, "src/gen/later.py", "l")


def test_turnbackignore_and_info_exclude_edits_move_the_watches(harness: Harness) -> None:
    w, ws = harness.watcher, harness.ws
    (ws / ".turnbackignore").unlink()
    harness.flush()
    assert {"build", "build/out"} <= w.watched_folders()
    (ws / ".git" / "info" / "exclude").write_text("docs/\n")
    harness.flush()
    assert "scratch/notes" in w.watched_folders()
    assert not {"docs", "docs/img"} & w.watched_folders()
    incremental, cp = harness.checkpoint()
    assert not incremental, "git's rules changed: the checkpoint walks"
    assert harness.has(cp, "scratch/notes/n.txt")
    assert harness.store.read_file(cp.id, "docs/a.md") is None


def test_a_core_excludes_file_edit_moves_the_watches(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walk_lays: bool,
) -> None:
    """The user's global ignore file (git's default place for ``core.excludesFile``): an
    edit re-judges the watched folders as a ``.gitignore`` edit does, saved in place or by
    an editor's rename over it."""
    xdg = tmp_path / "xdg"
    _write(xdg / "git" / "ignore", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    store = Store.open(tree, create=True)
    h = Harness(tree, store, walk_lays)
    h.watcher.start()
    try:
        assert h.watcher.wait_ready(10)
        h.checkpoint()
        w = h.watcher
        assert w.watched_folders() == TRACKED
        assert w.watch_count == len(TRACKED) + 4, "one more: the global file's folder"
        (xdg / "git" / "ignore").write_text("docs/\n")
        h.flush()
        assert w.watched_folders() == TRACKED - {"docs", "docs/img"}
        incremental, cp = h.checkpoint()
        assert not incremental, "git's rules changed: the checkpoint walks"
        assert h.store.read_file(cp.id, "docs/a.md") is None
        new = xdg / "git" / "ignore.new"
        new.write_text("src/gen/\n")
        os.replace(new, xdg / "git" / "ignore")
        h.flush()
        assert w.watched_folders() == TRACKED - {"src/gen"}
        incremental, cp = h.checkpoint()
        assert not incremental and h.has(cp, "docs/a.md")
        assert h.store.read_file(cp.id, "src/gen/g.py") is None
        (xdg / "git" / "other").write_text("src/\n")  # another file there: nothing changes
        h.flush()
        assert w.watched_folders() == TRACKED - {"src/gen"}
    finally:
        h.watcher.stop()
        store.close()


def test_a_file_written_right_after_its_folder_is_made_is_never_missed(
    harness: Harness,
) -> None:
    ws = harness.ws
    for i in range(40):
        d = ws / "src" / f"n{i}" / "m"
        d.mkdir(parents=True)
        (d / "first.txt").write_text(str(i))  # before the watcher can have read the mkdir
        if i % 4 == 0:
            harness.flush()  # sometimes the watch lands between the two writes
            (d / "second.txt").write_text(str(i))
    incremental, cp = harness.checkpoint()
    assert incremental
    for i in range(40):
        assert harness.has(cp, f"src/n{i}/m/first.txt", str(i)), i
        if i % 4 == 0:
            assert harness.has(cp, f"src/n{i}/m/second.txt", str(i)), i
    _write(ws / "src/n5/m/third.txt", "3")
    incremental, cp = harness.checkpoint()
    assert incremental and harness.has(cp, "src/n5/m/third.txt", "3")


def _limit_watches(monkeypatch: pytest.MonkeyPatch, budget: list[int]) -> None:
    """Make ``add_watch`` refuse (ENOSPC) once ``budget[0]`` workspace watches are held
    by watchers of this test (store and git folders always fit)."""
    from inotify_simple import INotify

    real_add, real_rm = INotify.add_watch, INotify.rm_watch
    held: dict[int, set[int]] = {}

    def add(self: INotify, path: Any, mask: int) -> int:
        mine = held.setdefault(id(self), set())
        is_ws = ".turnback" not in str(path) and "/info" not in str(path)
        if is_ws and len(mine) >= budget[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        wd = int(real_add(self, path, mask))
        if is_ws:
            mine.add(wd)
        return wd

    def rm(self: INotify, wd: int) -> None:
        held.setdefault(id(self), set()).discard(wd)
        real_rm(self, wd)

    monkeypatch.setattr(INotify, "add_watch", add)
    monkeypatch.setattr(INotify, "rm_watch", rm)
    monkeypatch.setattr(watchlimit, "read_limit", lambda path: 8192)


def _until(cond: Callable[[], bool], what: str) -> None:
    import time

    end = time.monotonic() + 10
    while not cond():
        assert time.monotonic() < end, what
        time.sleep(0.02)


def test_out_of_watches_no_change_is_missed_and_it_is_said(
    tree: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    walk_lays: bool,
) -> None:
    budget = [3]  # "", and two more of src, src/gen, docs, docs/img
    _limit_watches(monkeypatch, budget)
    store = Store.open(tree, create=True)
    h = Harness(tree, store, walk_lays)
    h.watcher.start()
    try:
        assert h.watcher.wait_ready(10)
        if walk_lays:
            assert h.watcher.limit is None, "nothing refused before the walk lays"
            incremental, _ = h.checkpoint()  # the walk that lays the watches (refused: 2)
            assert not incremental
        w = h.watcher
        assert len(w.watched_folders()) == 3
        left = h.tracker.walked
        assert left and not left & w.watched_folders()
        limit = w.limit
        assert limit is not None and limit.kind == "watches"
        assert (limit.watched, limit.allowed) == (3, 8192)
        assert limit.watched + limit.missing == len(TRACKED)
        assert limit.message.startswith("Turnback watches 3 of 8,192 allowed folders; "
                                        "checkpoints now scan the rest")
        assert "Raise fs.inotify.max_user_watches to 16,384" in limit.message
        assert sum("Turnback watches 3 of 8,192" in r.message for r in caplog.records) == 1

        h.checkpoint()  # the walk that makes the set trusted
        for i, top in enumerate(sorted(left)):
            _write(tree / top / f"unwatched{i}.txt", str(i))
        _write(tree / "brand-new" / "f.txt", "new")  # a new folder at the limit
        incremental, cp = h.checkpoint()
        assert incremental, "the watched part is still trusted"
        for i, top in enumerate(sorted(left)):
            assert h.has(cp, f"{top}/unwatched{i}.txt", str(i))
        assert h.has(cp, "brand-new/f.txt", "new")
        assert "brand-new" in h.tracker.walked
        # changed again, with no event at all for them: found by the walk all the same
        for i, top in enumerate(sorted(left)):
            (tree / top / f"unwatched{i}.txt").write_text("again")
        incremental, cp = h.checkpoint()
        for i, top in enumerate(sorted(left)):
            assert h.has(cp, f"{top}/unwatched{i}.txt", "again")

        # an ignore file changed in an unwatched folder: no event, read again all the same
        top = sorted(left)[0]
        (tree / top / ".gitignore").write_text("unwatched0.txt\n")
        _, cp = h.checkpoint()
        assert h.store.read_file(cp.id, f"{top}/unwatched0.txt") is None
        (tree / top / ".gitignore").unlink()
        _, cp = h.checkpoint()
        assert h.has(cp, f"{top}/unwatched0.txt", "again")

        # the CLI's status says it too, from the note the watcher left in the store
        note = json.loads((Path(store.root) / watchlimit.NOTE).read_text())
        assert note["watched"] == 3 and note["pid"] == os.getpid()
        out = run_cli(tree, "status").stdout.decode()
        assert "warning     Turnback watches 3 of 8,192 allowed folders" in out
        st = json.loads(run_cli(tree, "--json", "status").stdout.decode())
        assert st["watchLimit"]["raiseTo"] == 16384

        # watches freed (a watched folder deleted) and the budget raised: watched again
        budget[0] = 100
        import shutil

        # a top folder holding a watched folder (which one the walk reached first differs)
        shutil.rmtree(tree / min(f for f in w.watched_folders() if f).split("/")[0])
        h.flush()
        _until(lambda: (h.flush() or True) and w.limit is None, "every folder is watched")
        assert not h.tracker.walked
        assert not (Path(store.root) / watchlimit.NOTE).exists()
    finally:
        h.watcher.stop()
        store.close()
    assert "warning" not in run_cli(tree, "status").stdout.decode()


def test_out_of_inotify_instances_every_checkpoint_walks_and_it_is_said(
    tree: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inotify_simple import INotify

    def refuse(self: INotify, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(INotify, "__init__", refuse)
    monkeypatch.setattr(watchlimit, "read_limit", lambda path: 128)
    store = Store.open(tree, create=True)
    h = Harness(tree, store)
    h.watcher.start()
    try:
        assert h.watcher.wait_started(10) and not h.watcher.ready
        limit = h.watcher.limit
        assert limit is not None and limit.kind == "instances"
        assert "fs.inotify.max_user_instances to 256" in limit.message
        for i in range(2):
            _write(tree / "src" / f"f{i}.txt", str(i))
            ticket = h.tracker.take(walk=True)
            assert ticket.paths is None, "no watcher: every checkpoint walks"
            cp = store.checkpoint(dirty=ticket.paths)
            assert h.has(cp, f"src/f{i}.txt", str(i))
        assert "could not get an inotify instance" in run_cli(tree, "status").stdout.decode()
    finally:
        h.watcher.stop()
        store.close()


def test_a_hostile_note_is_not_believed(ws: Path) -> None:
    root = ws / ".turnback"
    root.mkdir()
    for text in ('{"kind": "watches", "watched": -1, "missing": 1, "pid": 1}',
                 '{"kind": "rm -rf", "watched": 1, "missing": 1, "pid": 1}',
                 '{"kind": "watches", "watched": 1, "missing": 1, "pid": 0}',
                 "[1, 2]", "not json", "x" * 10_000):
        (root / watchlimit.NOTE).write_text(text)
        assert watchlimit.read_note(root) is None, text
    (root / watchlimit.NOTE).write_text(json.dumps(
        {"kind": "watches", "watched": 5, "missing": 2, "allowed": None, "pid": os.getpid(),
         "message": "ignored: the message is always made here"}))
    got = watchlimit.read_note(root)
    assert got is not None and "ignored" not in got.message
    assert got.message.startswith("Turnback watches 5 of the allowed folders")


@pytest.fixture
def laid(tree: Path) -> Iterator[Harness]:
    """A watcher as the server starts one: its workspace watches left to the first walk."""
    store = Store.open(tree, create=True)
    h = Harness(tree, store, walk_lays=True)
    h.watcher.start()
    try:
        assert h.watcher.wait_ready(10)
        yield h
    finally:
        h.watcher.stop()
        store.close()


def _listed_folders(monkeypatch: pytest.MonkeyPatch, ws: Path) -> list[str]:
    """Every workspace folder listed (``os.scandir``) from now on, by anyone, in order."""
    real = os.scandir
    listed: list[str] = []

    def scandir(path: Any = ".") -> Any:
        where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else str(path)
        if where == str(ws) or where.startswith(str(ws) + "/"):
            listed.append(os.path.relpath(where, ws).replace(".", "", where == str(ws)))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return listed


def test_the_first_walk_lays_the_watches_listing_each_folder_once(
    laid: Harness, monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = laid.watcher
    assert w.watched_folders() == {""}, "only the top before the walk"
    assert w.watch_count == 1 + 3
    listed = _listed_folders(monkeypatch, laid.ws)
    incremental, _ = laid.checkpoint()
    assert not incremental
    assert w.watched_folders() == TRACKED
    assert w.watch_count == len(TRACKED) + 3
    assert sorted(listed) == sorted(TRACKED), "one listing of each kept folder, none ignored"
    assert w.walk_hook() is None, "laid: later walks lay nothing"
    _write(laid.ws / "docs/img/y.png", "y")
    incremental, cp = laid.checkpoint()
    assert incremental and laid.has(cp, "docs/img/y.png", "y")


def test_folders_made_while_the_first_walk_lays_are_never_missed(
    laid: Harness, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A folder made (with a file in it at once) in a folder just watched and not yet
    listed, and one made in a folder the walk has passed already: both in a checkpoint,
    both watched after."""
    ws, w = laid.ws, laid.watcher
    real = InotifyWatcher._lay

    def lay(self: InotifyWatcher, gen: int, rel: str, wd: int | None = None) -> bool:
        stale = real(self, gen, rel, wd)
        if rel == "src":  # watched, about to be listed
            _write(ws / "src/fresh/new.txt", "fresh")
        elif rel == "docs/img":  # src was listed before or is listed after: either way
            _write(ws / "late/deeper/f.txt", "late")
            _write(ws / "src/later/f.txt", "later")
        return stale

    monkeypatch.setattr(InotifyWatcher, "_lay", lay)
    laid.checkpoint()
    monkeypatch.setattr(InotifyWatcher, "_lay", real)
    incremental, cp = laid.checkpoint()
    assert incremental
    for rel, text in (("src/fresh/new.txt", "fresh"), ("late/deeper/f.txt", "late"),
                      ("src/later/f.txt", "later")):
        assert laid.has(cp, rel, text), rel
    assert {"src/fresh", "late", "late/deeper", "src/later"} <= w.watched_folders()
    for rel in ("src/fresh/two.txt", "late/deeper/two.txt", "src/later/two.txt"):
        _write(ws / rel, "2")
    incremental, cp = laid.checkpoint()
    assert incremental
    for rel in ("src/fresh/two.txt", "late/deeper/two.txt", "src/later/two.txt"):
        assert laid.has(cp, rel, "2"), rel


def test_a_first_walk_that_fails_leaves_the_laying_to_the_next(
    laid: Harness, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from turnback.snapshot.scan import Scanner

    real = Scanner._open_listing

    def fail(abs_dir: str, rel_dir: str, skipped: list[dict[str, object]]) -> Any:
        if rel_dir == "docs":
            raise OSError(5, "Input/output error")
        return real(abs_dir, rel_dir, skipped)

    monkeypatch.setattr(Scanner, "_open_listing", staticmethod(fail))
    with pytest.raises(OSError):
        laid.checkpoint()
    assert not laid.tracker.trusted, "a walk that failed laid no whole set"
    monkeypatch.setattr(Scanner, "_open_listing", staticmethod(real))
    _write(laid.ws / "docs/img/z.png", "z")
    incremental, cp = laid.checkpoint()
    assert not incremental and laid.has(cp, "docs/img/z.png", "z")
    assert laid.watcher.watched_folders() == TRACKED
    _write(laid.ws / "docs/img/z.png", "zz")
    incremental, cp = laid.checkpoint()
    assert incremental and laid.has(cp, "docs/img/z.png", "zz")
