"""The start-up walk's second core (``server/watching/startwalk.py``): a child forked before the
server's threads watches and checks half the folders on the watcher's own inotify
instance. Run in a fresh process each (the test process has threads: no fork there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.server.watching import inotify_watch
from turnback.snapshot import prescan

if not inotify_watch.available() or not sys.platform.startswith("linux"):  # pragma: no cover
    pytest.skip("inotify and fork: Linux only", allow_module_level=True)

SERVER = Path(__file__).resolve().parents[2] / "server"

# In the fresh process: the child, after it checks each folder, writes a new file there
# (after its listing: only its watch can tell); then the server's way of a first walk,
# and a second checkpoint, which must hold every such file.
SCRIPT = r"""
import json, os, sys
from pathlib import Path
ws = Path(sys.argv[1])
from turnback.snapshot import prescan
real = prescan.verify_one
parent = os.getpid()
def verify_one(root_fd, rel, want, held=None):
    got = real(root_fd, rel, want, held)
    if os.getpid() != parent and got is not None:
        (ws / rel / "from-child.txt").write_text(rel)
    return got
prescan.verify_one = verify_one
from turnback.server.watching import startwalk
startwalk.begin()
made = startwalk._made is not None
from turnback import Store
from turnback.server.watching.dirty import DirtyTracker
from turnback.server.workspace.folders import Folder, with_dirty
from turnback.server.watching.inotify_watch import InotifyWatcher
from turnback.server.workspace.settings import Settings
tracker = DirtyTracker()
w = InotifyWatcher(ws, ws / ".turnback", tracker, lambda s, c: None)
w.walk_lays = True
w.start()
assert w.wait_ready(10)
store = Store.open(ws)
folder = Folder(ws.as_uri(), ws, Settings())
folder.tracker, folder.watcher, folder.store = tracker, w, store
first, t1 = with_dirty(folder, lambda d: store.checkpoint(dirty=d))
written = sorted(str(p.parent.relative_to(ws)) for p in ws.rglob("from-child.txt"))
second, t2 = with_dirty(folder, lambda d: store.checkpoint(dirty=d))
held = [rel for rel in written if store.read_file(second.id, f"{rel}/from-child.txt")
        == rel.encode()]
out = {"made": made, "first_walked": t1.paths is None, "second_walked": t2.paths is None,
       "written": written, "held": held, "folders": len(w.watched_folders()),
       "orphans": len(w._orphans)}
w.stop()
store.close()
print(json.dumps(out))
"""


def test_the_childs_watches_report_what_changed_after_it_checked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _early_workspace(ws)
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    env.pop("TURNBACK_START_WORKER", None)
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(ws)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["made"], "the child was forked before any thread"
    assert got["first_walked"] and not got["second_walked"]
    assert got["written"], "the child checked some folders"
    assert got["held"] == got["written"], "a change after the child's listing is an event"
    assert got["folders"] == 41
    assert got["orphans"] == 0


# The child started at the fork (the store of the working folder): the same server
# steps, with a change made in one window of the start-up (argv[2]):
#  "none":   nothing changes; the walk must take every folder from the child
#  "before": in the child, after its watch and before its listing (the listing has it)
#  "after":  in the child, after its listing, the checkpoint asked only once the child
#            has finished (only the child's watch can tell): must be in the FIRST one
#  "walk":   in this process, right after the walk watched the folder (first or next)
EARLY = r"""
import json, os, sys, time
from pathlib import Path
ws = Path(sys.argv[1]); when = sys.argv[2]
from turnback.snapshot import prescan
real = prescan.verify_one
parent = os.getpid()
def verify_one(root_fd, rel, want, held=None):
    if os.getpid() != parent and when == "before":
        (ws / rel / "changed.txt").write_text(rel)
    got = real(root_fd, rel, want, held)
    if os.getpid() != parent and when == "after" and got is not None:
        (ws / rel / "changed.txt").write_text(rel)
    return got
prescan.verify_one = verify_one
if when == "swap":  # around the child's watch on d7/mid/sub, d7/mid is a link outside
    import inotify_simple
    real_add_watch = inotify_simple.INotify.add_watch
    mid = ws / "d7" / "mid"
    def add_watch(self, path, mask):
        seen = os.readlink(path) if str(path).startswith("/proc/self/fd/") else str(path)
        if os.getpid() == parent or seen != str(mid / "sub"):
            return real_add_watch(self, path, mask)
        os.rename(mid, ws / "d7" / "mid.real")
        os.symlink(ws.parent / "outside", mid)
        try:
            return real_add_watch(self, path, mask)
        finally:
            os.unlink(mid)
            os.rename(ws / "d7" / "mid.real", mid)
    inotify_simple.INotify.add_watch = add_watch
listed = []
from turnback.server.watching import startwalk
startwalk.begin()
made = startwalk._made
mode = made[1]._checker.mode(time.monotonic() + 60) if made is not None else None
early = mode == prescan._STARTED
if when == "stop" and made is not None:  # stopped for good before it sends anything
    import signal
    os.kill(made[1]._checker.pid, signal.SIGSTOP)
if early and when in ("none", "after", "swap"):
    # the checkpoint is asked once the child has checked every folder (a condition)
    checker = made[1]._checker
    deadline = time.monotonic() + 60
    while (prescan._INT.unpack_from(checker.shared, prescan._FRONT)[0]
           < int(os.environ.get("TB_FOLDERS", "41"))
           and time.monotonic() < deadline):
        time.sleep(0.005)
store_files = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns)
                     for p in (ws / ".turnback").rglob("*") if p.is_file())
from turnback import Store
from turnback.server.watching.dirty import DirtyTracker
from turnback.server.workspace.folders import Folder, with_dirty
from turnback.server.watching.inotify_watch import InotifyWatcher
from turnback.server.workspace.settings import Settings
from turnback.snapshot.scan import Scanner
real_open = Scanner._open_listing
def open_listing(abs_dir, rel_dir, skipped):
    listed.append(rel_dir)
    return real_open(abs_dir, rel_dir, skipped)
Scanner._open_listing = staticmethod(open_listing)
adopted = []
real_start = prescan.Worker.start
def start(self, *a, **k):
    got = real_start(self, *a, **k)
    adopted.append(got is not None and self._early is not None)
    return got
prescan.Worker.start = start
tracker = DirtyTracker()
w = InotifyWatcher(ws, ws / ".turnback", tracker, lambda s, c: None)
w.walk_lays = True
adds = []
real_add = InotifyWatcher._add
def add(self, kind, rel):
    if kind == "ws":
        adds.append(rel)
    return real_add(self, kind, rel)
InotifyWatcher._add = add
w.start()
assert w.wait_ready(10)
real_hook = w.walk_hook
def walk_hook():
    hook = real_hook()
    if hook is None or when != "walk":
        return hook
    real_call = hook.__class__.__call__
    class Hook(hook.__class__):
        def __call__(self, rel):
            told = real_call(self, rel)
            (ws / rel / "changed.txt").write_text(rel)  # after its watch, before its listing
            return told
    hook.__class__ = Hook
    return hook
w.walk_hook = walk_hook
store = Store.open(ws)
untouched = store_files == sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns)
                                  for p in (ws / ".turnback").rglob("*") if p.is_file())
folder = Folder(ws.as_uri(), ws, Settings())
folder.tracker, folder.watcher, folder.store = tracker, w, store
first, t1 = with_dirty(folder, lambda d: store.checkpoint(dirty=d))
written = sorted(str(p.parent.relative_to(ws)) for p in ws.rglob("changed.txt"))
(ws / "d5" / "late.txt").write_text("late")  # after the first walk: an event, or lost
if when == "swap":
    (ws / "d7" / "mid" / "sub" / "late.txt").write_text("late")
second, t2 = with_dirty(folder, lambda d: store.checkpoint(dirty=d))
def watched_inodes(ino):
    # the kernel's own list of this instance's watches (hex inode numbers)
    with open(f"/proc/self/fdinfo/{ino.fileno()}") as f:
        return [int(part[4:], 16) for line in f if line.startswith("inotify")
                for part in line.split() if part.startswith("ino:")]
def held(cp):
    return [r for r in written
            if store.read_file(cp.id, "changed.txt" if r == "." else f"{r}/changed.txt")
            == (b"" if r == "." else r.encode())]
out = {"early": early, "mode": mode, "tree": first.tree, "adopted": adopted,
       "untouched": untouched, "written": written,
       "first": held(first), "second": held(second), "listed": len(listed),
       "second_walked": t2.paths is None, "folders": len(w.watched_folders()),
       "orphans": len(w._orphans), "adds": len(adds),
       "late": store.read_file(second.id, "d5/late.txt") == b"late",
       "swap_late": when == "swap" and "d7/mid/sub/late.txt" in [
           c.path for c in store.changes(first.id, second.id)],
       "watched_inodes": watched_inodes(w._ino)}
w.stop()
store.close()
print(json.dumps(out))
"""


def _early_workspace(ws: Path) -> None:
    """40 folders and the top (41), enough files for a child; two checkpoints (the
    second records every folder's listing: what the child checks)."""
    for d in range(40):
        for f in range(prescan.FORK_MIN_FILES // 40 + 5):
            p = ws / f"d{d}" / f"f{f}.txt"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"{d}/{f}")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        store.checkpoint()


def _run_early(ws: Path, when: str, folders: int = 41) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(SERVER), "TB_FOLDERS": str(folders)}
    env.pop("TURNBACK_START_WORKER", None)
    env.pop("TURNBACK_STORE", None)
    run = subprocess.run([sys.executable, "-c", EARLY, str(ws), when], env=env, cwd=ws,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return got


@pytest.fixture(scope="module")
def early_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("early") / "ws"
    _early_workspace(ws)
    return ws


@pytest.fixture
def fresh_ws(early_ws: Path, tmp_path: Path) -> Path:
    """A copy of the module's workspace and store (each test changes its files)."""
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(early_ws, ws, symlinks=True)
    # the copy's stat cache speaks of other inodes: two checkpoints record this one
    with Store.open(ws) as store:
        store.checkpoint()
        store.checkpoint()
    return ws


def test_the_child_started_at_the_fork_does_the_walks_listings(fresh_ws: Path) -> None:
    """Nothing changes: the first walk adopts the child and lists no folder itself; the
    child wrote nothing to the store."""
    got = _run_early(fresh_ws, "none")
    assert got["early"] and got["adopted"] == [True]
    assert got["listed"] == 0, "every folder taken from the child's listing"
    assert got["untouched"], "the child never writes to the store"
    assert got["folders"] == 41 and got["orphans"] == 0
    assert got["adds"] == 1, "only the top (the watcher's own): the rest are the child's"
    assert got["late"] and not got["second_walked"], "the child's watches report"


def test_a_change_before_the_childs_listing_is_in_the_first_checkpoint(fresh_ws: Path
                                                                          ) -> None:
    got = _run_early(fresh_ws, "before")
    assert got["early"] and got["adopted"] == [True]
    assert len(got["written"]) == 41  # type: ignore[arg-type]
    assert got["first"] == got["written"]


def test_a_change_after_the_childs_listing_is_in_the_first_checkpoint(fresh_ws: Path
                                                                         ) -> None:
    """Made after the child listed the folder, before the checkpoint was asked: the walk
    reads the queue first and lists again each folder with an event on its watch."""
    got = _run_early(fresh_ws, "after")
    assert got["early"] and got["adopted"] == [True]
    assert len(got["written"]) == 41  # type: ignore[arg-type]
    assert got["first"] == got["written"], "a listing older than the request was trusted"
    assert got["listed"] == 41, "only the folders that changed are listed again"
    assert got["adds"] == 41, "a folder that changed is watched again, not adopted"


def test_a_change_during_the_walk_is_in_the_first_or_the_next(fresh_ws: Path) -> None:
    got = _run_early(fresh_ws, "walk")
    assert got["early"] and got["adopted"] == [True]
    assert len(got["written"]) == 41  # type: ignore[arg-type]
    assert got["second"] == got["written"]
    assert not got["second_walked"]


def _plant(ws: Path, what: str) -> None:
    """Something planted in the store where the child looks."""
    import shutil

    stat_bin = ws / ".turnback" / "cache" / "stat.bin"
    if what == "fifo":
        stat_bin.unlink()
        os.mkfifo(stat_bin)
    elif what == "garbage":
        stat_bin.write_bytes(os.urandom(4096))
    elif what == "huge":  # a header said to be 4 GB long, in a file of a few bytes
        stat_bin.write_bytes(prescan.MAGIC + prescan.U32.pack(2**32 - 1) + b"{}")
    elif what == "outside":  # records of folders out of the workspace, a name with a NUL
        got = prescan.read_records(str(stat_bin))
        assert got is not None
        raw = stat_bin.read_bytes()
        import json as _json

        (hlen,) = prescan.U32.unpack_from(raw, len(prescan.MAGIC))
        head = _json.loads(raw[len(prescan.MAGIC) + 4: len(prescan.MAGIC) + 4 + hlen])
        head["dirrecs"] = {"../..": "0" * 32, "/etc": "0" * 32, "d1\0x": "0" * 32,
                           **head["dirrecs"]}
        head["dirtrees"] = {"../..": [], "/etc": [], "d1\0x": [], **head["dirtrees"]}
        body = _json.dumps(head).encode()
        stat_bin.write_bytes(prescan.MAGIC + prescan.U32.pack(len(body)) + body
                             + raw[len(prescan.MAGIC) + 4 + hlen:])
    elif what in ("through-link", "ignored"):
        if what == "through-link":  # records below a folder now a link to one outside
            outside = ws.parent / "outside"
            for i in range(50):
                (outside / f"sub{i}").mkdir(parents=True, exist_ok=True)
            (ws / "lnk").symlink_to(outside)
        else:  # records of ignored folders (a walk neither lists nor watches them)
            for i in range(50):
                (ws / "lnk" / f"sub{i}").mkdir(parents=True, exist_ok=True)
            (ws / ".gitignore").write_text("lnk/\n")
        raw = stat_bin.read_bytes()
        import json as _json

        (hlen,) = prescan.U32.unpack_from(raw, len(prescan.MAGIC))
        head = _json.loads(raw[len(prescan.MAGIC) + 4: len(prescan.MAGIC) + 4 + hlen])
        planted = [f"lnk/sub{i}" for i in range(50)]
        head["dirrecs"] = {**head["dirrecs"], **dict.fromkeys(planted, "0" * 32)}
        head["dirtrees"] = {**head["dirtrees"], **{key: [] for key in planted}}
        body = _json.dumps(head).encode()
        stat_bin.write_bytes(prescan.MAGIC + prescan.U32.pack(len(body)) + body
                             + raw[len(prescan.MAGIC) + 4 + hlen:])
    elif what == "link":  # the store is a link to a store elsewhere
        elsewhere = ws.parent / "elsewhere"
        shutil.move(str(ws / ".turnback"), elsewhere)
        (ws / ".turnback").symlink_to(elsewhere)


@pytest.mark.parametrize("what", ["fifo", "garbage", "huge", "outside"])
def test_a_planted_stat_cache_leaves_the_first_checkpoint_right(fresh_ws: Path, what: str
                                                                ) -> None:
    """A FIFO (whose open would wait forever), garbage, a header longer than its file,
    records of folders outside: the start goes on, the child never lists outside, and
    the first checkpoint is the workspace as it is."""
    from wsutil import plain_scan

    _plant(fresh_ws, what)
    (fresh_ws / "d3" / "new.txt").write_text("new")
    got = _run_early(fresh_ws, "none")
    (fresh_ws / "d5" / "late.txt").unlink()  # written after the first checkpoint
    assert got["tree"] == plain_scan(fresh_ws).tree
    if what == "outside":
        assert got["early"], "the records that hold are still checked at the fork"
        assert got["folders"] == 41
    else:
        assert got["mode"] == prescan._WAITING, "not started on what it could not read"


def test_records_below_a_link_leave_no_watch_outside(fresh_ws: Path) -> None:
    """A folder of the workspace replaced by a link to a folder outside (or planted
    records below a link): the child opens and watches by path, which follows a link
    part-way along it. The walk never goes there, so no event on such a watch is read
    and none is removed: each held one of the user's inotify watches (a limit shared by
    every process of theirs) for the server's life, on folders outside the workspace."""
    _plant(fresh_ws, "through-link")
    got = _run_early(fresh_ws, "none")
    assert got["early"] and got["folders"] == 41
    outside = {(fresh_ws.parent / "outside" / f"sub{i}").stat().st_ino for i in range(50)}
    kept = outside & set(got["watched_inodes"])  # type: ignore[call-overload]
    assert not kept, f"{len(kept)} watches on folders outside the workspace"
    ws_folders = {fresh_ws.stat().st_ino} | {(fresh_ws / f"d{d}").stat().st_ino
                                             for d in range(40)}
    assert ws_folders <= set(got["watched_inodes"])  # type: ignore[call-overload]


def test_a_link_swapped_in_and_out_around_the_childs_watch_watches_nothing_outside(
        fresh_ws: Path) -> None:
    """Between the child's check of the folders above ``d7/mid/sub`` and its watch,
    ``d7/mid`` is a link to a folder outside, and back again (built in the child's
    ``add_watch``, no race; ``d7`` and ``d7/mid`` come after their subfolder in the
    records, so no watch of the child's sees the swap). The child watched by path: the
    watch landed on ``outside/sub``, the walk adopted it for ``d7/mid/sub``, and a change
    in the real folder after the walk was missed by the next checkpoint. It now watches
    the folder it opened, each step without following a link."""
    from wsutil import age_tree

    (fresh_ws / "d7" / "mid" / "sub").mkdir(parents=True)
    (fresh_ws / "d7" / "mid" / "sub" / "a.txt").write_text("a")
    (fresh_ws.parent / "outside" / "sub").mkdir(parents=True)
    age_tree(fresh_ws)
    with Store.open(fresh_ws) as store:
        store.checkpoint()
        store.checkpoint()
    got_recs = prescan.read_records(str(fresh_ws / ".turnback" / "cache" / "stat.bin"))
    assert got_recs is not None
    order = list(got_recs[1])
    assert order.index("d7/mid/sub") < order.index("d7/mid") < order.index("d7")
    got = _run_early(fresh_ws, "swap", folders=43)
    assert got["early"] and got["adopted"] == [True] and got["folders"] == 43
    watched = set(got["watched_inodes"])  # type: ignore[call-overload]
    assert (fresh_ws.parent / "outside" / "sub").stat().st_ino not in watched, \
        "a watch on the folder outside"
    assert (fresh_ws / "d7" / "mid" / "sub").stat().st_ino in watched
    assert got["swap_late"], "a change in d7/mid/sub after the first walk was missed"


def test_records_of_ignored_folders_leave_no_watch(fresh_ws: Path) -> None:
    """Records planted for folders the walk ignores (a vendored tree of thousands): the
    child watches them before the walk says they are ignored; those it kept held one of
    the user's inotify watches each until an event came on them."""
    _plant(fresh_ws, "ignored")
    got = _run_early(fresh_ws, "none")
    assert got["early"] and got["folders"] == 41
    ignored = {(fresh_ws / "lnk" / f"sub{i}").stat().st_ino for i in range(50)}
    kept = ignored & set(got["watched_inodes"])  # type: ignore[call-overload]
    assert not kept, f"{len(kept)} watches on ignored folders"


def test_a_child_stopped_at_the_fork_neither_hangs_the_walk_nor_loses_a_change(
        fresh_ws: Path) -> None:
    """SIGSTOP on the start child (a debugger, a job control slip): the walk checks the
    rest itself, waits a bounded time for the child's results, kills and reaps it."""
    from wsutil import plain_scan

    (fresh_ws / "d3" / "new.txt").write_text("new")
    got = _run_early(fresh_ws, "stop")
    (fresh_ws / "d5" / "late.txt").unlink()  # written after the first checkpoint
    assert got["early"] and got["adopted"] == [True]
    assert got["tree"] == plain_scan(fresh_ws).tree
    assert got["late"], "the walk's own watches report the change after it"


def test_no_start_at_the_fork_on_a_store_that_is_a_link(fresh_ws: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """The checkpoint refuses a store that is a link; the child does not read it."""
    from turnback.server.watching import startwalk

    monkeypatch.delenv("TURNBACK_STORE", raising=False)
    monkeypatch.chdir(fresh_ws)
    assert startwalk.store_here() == (str(fresh_ws.resolve()),
                                      str(fresh_ws.resolve() / ".turnback/cache/stat.bin"))
    _plant(fresh_ws, "link")
    assert startwalk.store_here() is None
    (fresh_ws / ".turnback").unlink()
    assert startwalk.store_here() is None, "no store: none made"
    assert not (fresh_ws / ".turnback").exists()
    monkeypatch.setenv("TURNBACK_STORE", str(fresh_ws.parent / "elsewhere"))
    assert startwalk.store_here() is None, "a store chosen elsewhere: the walk's job"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making a folder another user's needs root")
def test_no_start_at_the_fork_on_another_users_store(fresh_ws: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from turnback.server.watching import startwalk

    monkeypatch.delenv("TURNBACK_STORE", raising=False)
    monkeypatch.chdir(fresh_ws)
    os.chown(fresh_ws / ".turnback", 4242, 4242)
    assert startwalk.store_here() is None


def test_records_leading_out_of_the_workspace_are_never_checked() -> None:
    recs = {"": "a", "../..": "b", "/etc": "c", "d/../../x": "d", "d": "e", "d..e": "f",
            "d\0x": "g"}
    assert prescan.recorded_folders(recs, dict.fromkeys(recs)) == ["", "d", "d..e"]


DROP = r"""
import json, os, sys, time
from pathlib import Path
ws = Path(sys.argv[1])
from turnback.server.watching import startwalk
startwalk.begin()
ino, worker = startwalk._made
pid = worker._checker.pid
from turnback.server.workspace.folders import Folder
from turnback.server.workspace.settings import Settings
folder = Folder(ws.as_uri(), ws, Settings(watch=False))
folder.start_watcher(lambda s, c: None)
try:
    os.waitpid(pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps({"taken": startwalk._made is None, "reaped": reaped, "closed": ino.closed}))
"""


def test_a_start_child_no_watcher_takes_is_stopped(fresh_ws: Path) -> None:
    """Watching off: the child started at the fork (with its watches and results) is
    killed and its instance closed, not kept until the server exits."""
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    env.pop("TURNBACK_START_WORKER", None)
    env.pop("TURNBACK_STORE", None)
    run = subprocess.run([sys.executable, "-c", DROP, str(fresh_ws)], env=env, cwd=fresh_ws,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {
        "taken": True, "reaped": True, "closed": True}
