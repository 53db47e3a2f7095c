"""The forked check of folder records (``Scanner._preverify``): a full scan of a big
workspace in a one-shot process checks half of the recorded folders in a child process.
Whatever the child or the fork does, the tree must be the one a plain full scan builds."""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.snapshot import prescan
from turnback.snapshot import scan as scan_mod
from wsutil import age, age_tree, plain_scan, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the forked check runs on Linux only")

FOLDERS = ["", "a", "b", "c", "d", "a/x", "b/y", "c/z", "d/w/v"]  # 4 files in each
ALL = [*FOLDERS, "d/w"]  # and a folder of folders alone


@pytest.fixture(autouse=True)
def _fork_always(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fork whatever the workspace's size; and no thread left over by earlier tests (a
    store not closed keeps its hashing pool until collected), which would forbid it."""
    monkeypatch.setattr(prescan, "FORK_MIN_FILES", 0)
    gc.collect()
    deadline = time.monotonic() + 10
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    if threading.active_count() > 1:
        pytest.skip("threads of other tests still run: no fork")
    yield


def _workspace(ws: Path) -> None:
    for d in FOLDERS:
        for i in range(4):
            write(ws, f"{d}/f{i}.txt" if d else f"f{i}.txt", f"{d} {i}")
    write(ws, ".gitignore", "*.log\n")
    write(ws, "a/skip.log", "ignored")
    os.symlink("f0.txt", ws / "b" / "link")
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()  # every file matched its row: every folder gets a record


def _cold(ws: Path) -> Store:
    """A fresh store object as the CLI opens it: forked checks on."""
    s = Store.open(ws)
    s.scanner.fork_verify = True
    return s


def _plain_tree(ws: Path) -> str:
    """The tree of a full scan that trusts no cache."""
    return plain_scan(ws).tree


_WAIT = 10.0  # seconds a side waits for the other's signal before giving up


def _await_line(fd: int) -> str | None:
    """One line from a pipe, or None if none comes within ``_WAIT`` seconds."""
    import select

    got = b""
    deadline = time.monotonic() + _WAIT
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        got += chunk
    return got[:-1].decode()


class _Spy:
    """Splits the folder checks at a set place, and records who checked what.

    The child checks the first ``split`` folders, then, at the next, tells this process
    which folder that is and waits; this process waits for that word before its first
    check, checks from the back down to that folder (where the child's finished checks
    begin), and says so; only then does the child go on (and stops at once: this process
    has checked the rest). So the split is the same every run, whatever the scheduler
    does. Only the first scan is split so (later ones check the records it left, as
    they come). ``child`` is what the child does at its ``split``-th folder instead of going
    on: "crash", "hang" or None. ``mine``: the folders this process checked; ``found``:
    what ``_preverify`` returned.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, split: int,
                 child: str | None = None) -> None:
        self.pid = os.getpid()
        self.mine: list[str] = []
        self.found: dict[str, Any] = {}
        self.boundary: str | None = None  # the folder the child waits at, once it said
        self.scans = 0
        self._pipes: tuple[int, int, int, int] | None = None  # go (r, w), done (r, w)
        real_one = prescan.verify_one
        real_pre = scan_mod.Scanner._preverify
        child_checks = [0]  # counted in the child's copy: each fork starts at 0

        def theirs(root_fd: int, rel: str, want: str | None, held: int | None) -> Any:
            assert self._pipes is not None
            child_checks[0] += 1
            if child_checks[0] == split + 1:
                os.write(self._pipes[1], rel.encode() + b"\n")
                if child == "crash":
                    raise RuntimeError("the child fails")
                if child == "hang":
                    time.sleep(60)  # stuck: this process kills it, long before
                _await_line(self._pipes[2])
            return real_one(root_fd, rel, want, held)

        def one(root_fd: int, rel: str, want: str | None, held: int | None = None) -> Any:
            if self.scans != 1:  # (the child's copy was made during the first)
                return real_one(root_fd, rel, want, held)
            if os.getpid() != self.pid:
                return theirs(root_fd, rel, want, held)
            assert self._pipes is not None
            if self.boundary is None:
                self.boundary = _await_line(self._pipes[0])
                assert self.boundary is not None, "the child never reached its split"
            self.mine.append(rel)
            got = real_one(root_fd, rel, want, held)
            if rel == self.boundary:
                os.write(self._pipes[3], b"done\n")
            return got

        def pre(scanner: scan_mod.Scanner) -> Any:
            self.scans += 1
            if self.scans != 1:
                return real_pre(scanner)
            self.mine.clear()
            self.boundary = None
            go_r, go_w = os.pipe()
            done_r, done_w = os.pipe()
            self._pipes = (go_r, go_w, done_r, done_w)
            try:
                got = real_pre(scanner)
            finally:
                for fd in self._pipes:
                    os.close(fd)
                self._pipes = None
            self.found = dict(got)
            return got

        monkeypatch.setattr(prescan, "verify_one", one)
        monkeypatch.setattr(scan_mod.Scanner, "_preverify", pre)

    def theirs(self) -> list[str]:
        """The folders only the child checked."""
        return [d for d in ALL if d not in self.mine]


def _listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records the folders the walk lists (those not taken from a verified record). The
    walk's own compiled check of a record (``Scanner._compiled_check``) is turned off:
    every folder the forked checks left is listed (``test_folder_parts.py`` tests it)."""
    listed: list[str] = []
    real_open = scan_mod.Scanner._open_listing
    monkeypatch.setattr(scan_mod.Scanner, "_compiled_check", lambda *_: None)

    def open_listing(abs_dir: str, rel_dir: str, skipped: list[dict[str, object]]) -> Any:
        listed.append(rel_dir)
        return real_open(abs_dir, rel_dir, skipped)

    monkeypatch.setattr(scan_mod.Scanner, "_open_listing", staticmethod(open_listing))
    return listed


def test_no_op_takes_every_folder_from_the_two_checks(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    _workspace(ws)
    spy = _Spy(monkeypatch, split=len(ALL) // 2)  # each side checks half
    listed = _listed(monkeypatch)
    with _cold(ws) as s:
        cp = s.checkpoint()
        assert len(spy.mine) == len(ALL) - len(ALL) // 2 and spy.theirs(), \
            "both processes had folders to check"
        assert set(spy.found) == set(ALL), "every folder verified, by one side or other"
        assert listed == [], "no folder listed again by the walk"
        assert cp.tree == _plain_tree(ws) and cp.files == 4 * len(FOLDERS) + 2
        # the records stay for the next cold checkpoint
        assert set(s.scanner.statcache.dirrecs) == set(ALL)
    with _cold(ws) as s:
        assert s.checkpoint().tree == cp.tree


@pytest.mark.parametrize("side", ["mine", "theirs"])
@pytest.mark.parametrize("change", ["modify", "delete", "add", "mkdir", "chmod", "relink"])
def test_a_change_in_either_half_is_seen(ws: Path, monkeypatch: pytest.MonkeyPatch, side: str,
                                         change: str) -> None:
    _workspace(ws)
    # the split at one end: this process checks every folder, or the child all but the
    # last (this process checks that one: "d/w", after "b" in the stat cache's order)
    spy = _Spy(monkeypatch, split=0 if side == "mine" else len(ALL) - 1)
    p = ws / "b"
    if change == "modify":
        (p / "f1.txt").write_text("changed, same folder listing")
        age(p / "f1.txt")
    elif change == "delete":
        (p / "f2.txt").unlink()
    elif change == "add":
        write(p, "new.txt", "new")
    elif change == "mkdir":
        write(p, "newdir/inner.txt", "inner")
    elif change == "chmod":
        os.chmod(p / "f3.txt", 0o755)
    else:
        (p / "f0.txt").unlink()
        os.symlink("f1.txt", p / "f0.txt")
    with _cold(ws) as s:
        cp = s.checkpoint()
        assert ("b" in spy.mine) == (side == "mine"), "checked by the side meant"
        assert "b" not in spy.found, "the changed folder was not taken from its record"
        assert "b/y" in spy.found, "its unchanged subfolder was"
        assert cp.tree == _plain_tree(ws)
    with _cold(ws) as s:
        assert s.checkpoint().tree == cp.tree  # and its new record is true


def test_a_folder_turned_into_a_link_is_not_followed(ws: Path) -> None:
    _workspace(ws)
    (ws / "c").rename(ws / "moved")
    os.symlink("moved", ws / "c")  # "c/z" still lists as recorded, through the link
    with _cold(ws) as s:
        cp = s.checkpoint()
        walked = dict(s.trees.walk(cp.tree))
    assert cp.tree == _plain_tree(ws)
    assert walked["c"].mode == "l" and "c/z/f0.txt" not in walked and "moved/z/f0.txt" in walked


def test_threads_mean_no_fork(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspace(ws)
    age(write(ws, "a/f1.txt", "changed"))

    def no_fork() -> int:
        raise AssertionError("forked while another thread ran")

    monkeypatch.setattr(prescan.os, "fork", no_fork)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with _cold(ws) as s:
            assert s.checkpoint().tree == _plain_tree(ws)
    finally:
        stop.set()
        other.join()


def test_off_by_default_and_below_the_size(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspace(ws)

    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(prescan.os, "fork", no_fork)
    with Store.open(ws) as s:  # the API's default (the server's too): no fork
        assert s.checkpoint().tree == _plain_tree(ws)
    monkeypatch.setattr(prescan, "FORK_MIN_FILES", 10_000)
    with _cold(ws) as s:  # a small workspace: not worth a fork
        assert s.checkpoint().tree == _plain_tree(ws)


def test_the_fork_still_pays_after_an_incremental_checkpoint(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental checkpoint (a server's) rebuilds the root folder and drops its record:
    the workspace's size, which decides the fork, comes from the stat cache's rows."""
    _workspace(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        age(write(ws, "a/x/f1.txt", "changed by an agent"))
        s.checkpoint(dirty={"a/x/f1.txt"})  # no base yet in this object: a full scan
        age(write(ws, "a/x/f2.txt", "changed again"))
        s.checkpoint(dirty={"a/x/f2.txt"})  # incremental: "", "a", "a/x" rebuilt
    monkeypatch.setattr(prescan, "FORK_MIN_FILES", 30)  # the workspace has 36 files
    forks: list[int] = []
    real = prescan.fork_checker

    def counted(*args: Any, **kwargs: Any) -> Any:
        forks.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(prescan, "fork_checker", counted)
    with _cold(ws) as s:
        s.scanner.statcache.load()
        assert "" not in s.scanner.statcache.dirtrees, "the root's record is gone"
        assert s.checkpoint().tree == _plain_tree(ws)
    assert forks == [1]


def test_a_failed_fork_falls_back(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspace(ws)
    age(write(ws, "b/y/f1.txt", "changed"))

    def fail() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(prescan.os, "fork", fail)
    with _cold(ws) as s:
        assert s.checkpoint().tree == _plain_tree(ws)


@pytest.mark.parametrize("how", ["crash", "hang", "garbage"])
def test_a_failed_child_costs_only_its_half(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                            how: str) -> None:
    """The child dies, hangs (killed after a while) or sends nonsense, after checking
    some folders: this process keeps its own checks, and the child's folders are listed
    by the walk as without a fork."""
    _workspace(ws)
    age(write(ws, "c/z/f1.txt", "changed"))
    age(write(ws, "a/f2.txt", "changed"))
    parent = os.getpid()
    real_dumps = prescan.marshal.dumps

    def dumps(value: Any) -> bytes:
        return b"\x00garbage" if os.getpid() != parent else real_dumps(value)

    spy = _Spy(monkeypatch, split=3, child=None if how == "garbage" else how)
    monkeypatch.setattr(prescan.marshal, "dumps", dumps)
    listed = _listed(monkeypatch)
    started = time.monotonic()
    with _cold(ws) as s:
        cp = s.checkpoint()
        walked = list(listed)  # (the plain scan below lists every folder)
    assert time.monotonic() - started < 30
    assert cp.tree == _plain_tree(ws)
    assert len(spy.mine) == len(ALL) - 3 and spy.found, "this process checked its half"
    assert set(spy.found) == set(spy.mine) - {"a", "c/z"}, \
        "its checks kept, the changed folders not taken from their records"
    assert sorted(walked) == sorted(d for d in ALL if d not in spy.found), \
        "every other folder (the child's among them) listed by the walk"
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left behind


# -- the CLI's early child -----------------------------------------------------------------
def _stat_path(ws: Path) -> str:
    return str(ws / ".turnback" / "cache" / "stat.bin")


def _taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records whether each scan took the early child."""
    took: list[bool] = []
    real = prescan.take_early

    def take(*a: Any) -> Any:
        got = real(*a)
        took.append(got is not None)
        return got

    monkeypatch.setattr(prescan, "take_early", take)
    return took


def _early_has(stat_path: str, checked_all: bool) -> None:
    """Wait until the early child has loaded the stat cache (and, if ``checked_all``,
    checked every folder it records): read from the counters it shares."""
    early = prescan._early
    assert early is not None
    got = prescan.read_records(stat_path)
    assert got is not None
    want = len(prescan.recorded_folders(got[1], got[2])) if checked_all else 0
    deadline = time.monotonic() + _WAIT
    while (early.identity() == (0, 0, 0)
           or prescan._INT.unpack_from(early.shared, prescan._FRONT)[0] < want):
        assert time.monotonic() < deadline, "the early child did not get that far"
        time.sleep(0.005)


def _no_child_left() -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_the_early_child_is_taken_and_sees_changes(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    _workspace(ws)
    age(write(ws, "c/f1.txt", "changed"))
    (ws / "b/y/f2.txt").unlink()
    took = _taken(monkeypatch)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    _early_has(_stat_path(ws.resolve()), checked_all=True)
    with _cold(ws) as s:
        cp = s.checkpoint()
    assert took == [True]
    assert cp.tree == _plain_tree(ws)
    _no_child_left()


@pytest.mark.parametrize("wrong", ["workspace", "stat path", "stat file replaced"])
def test_an_early_child_of_another_cache_is_killed(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, wrong: str) -> None:
    _workspace(ws)
    other = tmp_path / "other"
    other.mkdir()
    real = ws.resolve()
    prescan.fork_early(str(other if wrong == "workspace" else real),
                       str(other / "stat.bin") if wrong == "stat path" else _stat_path(real))
    if wrong == "stat file replaced":
        _early_has(_stat_path(real), checked_all=False)  # the child loaded the file;
        # another checkpoint then replaces it
        age(write(ws, "a/x/f1.txt", "changed"))
        with Store.open(ws) as s:
            s.checkpoint()
    took = _taken(monkeypatch)
    with _cold(ws) as s:
        cp = s.checkpoint()
    assert took == [False]
    assert cp.tree == _plain_tree(ws)
    _no_child_left()


def test_an_early_child_not_taken_is_killed_at_exit(ws: Path) -> None:
    _workspace(ws)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    assert prescan._early is not None
    prescan.drop_early()  # what the exit hook does
    assert prescan._early is None
    _no_child_left()


def test_finishing_an_interrupted_rewind_drops_the_early_child(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The early child may check folders before ``Store.open`` finishes a rewind: what it
    saw is not what the checkpoint must record."""
    from turnback.rewind import apply as apply_mod
    _workspace(ws)
    with Store.open(ws) as s:
        target = s.checkpoint()
        for d in ("a", "b/y", "c/z"):
            age(write(ws, f"{d}/f1.txt", f"{d} later"))
        s.checkpoint()
        s.checkpoint()  # the records are of the later files

        class Crash(BaseException):
            pass

        class Dies:
            def __init__(self, *_a: object) -> None:
                pass

            def preload(self, _plan: object) -> None:
                pass  # reads only (during the journal's sync)

            def apply(self, _plan: object) -> None:
                # the journal is written and one file of the plan with it: the next open
                # finishes the rewind (one with no file written is emptied: trust37)
                write(ws, "c/z/f1.txt", "c/z 1")
                raise Crash

            def release_failed(self) -> None:
                pass  # nothing held

        # the store imports the applier where it applies a plan: patched at its module
        monkeypatch.setattr(apply_mod, "Applier", Dies)
        with pytest.raises(Crash):
            s.rewind(target.id)
        monkeypatch.undo()
    monkeypatch.setattr(prescan, "FORK_MIN_FILES", 0)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    # the child found the folders as recorded, before the rewind ends
    _early_has(_stat_path(ws.resolve()), checked_all=True)
    took = _taken(monkeypatch)
    with _cold(ws) as s:  # finishes the rewind
        assert (ws / "a" / "f1.txt").read_text() == "a 1"
        cp = s.checkpoint()
    assert took == [False]
    assert cp.tree == target.tree == _plain_tree(ws)
    _no_child_left()


@pytest.mark.parametrize(("args", "env", "where"), [
    (["checkpoint"], {}, ("ws", "ws/.turnback")),
    (["--json", "-C", "{ws}", "checkpoint", "-m", "x"], {}, ("ws", "ws/.turnback")),
    (["-C{ws}", "checkpoint"], {}, ("ws", "ws/.turnback")),
    (["--workspace={ws}", "--store", "{tmp}/s", "checkpoint"], {}, ("ws", "s")),
    (["--store={tmp}/s", "checkpoint"], {}, ("ws", "s")),
    (["checkpoint"], {"TURNBACK_STORE": "{tmp}/s"}, ("ws", "s")),
    (["checkpoints"], {}, None),
    (["checkpoint", "--help"], {}, None),
    (["--version"], {}, None),
    (["-q", "checkpoint"], {}, None),
])
def test_the_cli_starts_the_early_child_for_checkpoint_alone(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
        env: dict[str, str], where: tuple[str, str] | None) -> None:
    """``turnback checkpoint`` guesses the workspace and stat cache ``Store.open`` finds
    (from a subfolder too), before anything else is imported."""
    from turnback.cli import main as cli_main
    from turnback.store.config import STORE_DIRNAME

    assert STORE_DIRNAME == ".turnback"  # spelled out in cli/main.py
    _workspace(ws)
    (ws / "a").mkdir(exist_ok=True)
    monkeypatch.chdir(ws / "a")
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(tmp=tmp_path))
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(prescan, "fork_early", lambda w, p: calls.append((w, p)))
    assert cli_main._start_checks([a.format(ws=ws, tmp=tmp_path) for a in args]) == bool(where)
    if where is None:
        assert calls == []
        return
    base = tmp_path.resolve()
    assert calls == [(str(base / where[0]), str(base / where[1] / "cache" / "stat.bin"))]


def test_the_cli_checkpoint_exits_quickly_with_its_output_and_code(ws: Path) -> None:
    """``turnback checkpoint`` leaves with ``os._exit`` once done: all of its output is
    still there, and its exit codes are those of a normal exit."""
    import json

    from wsutil import run_cli

    _workspace(ws)
    out = run_cli(ws, "--json", "checkpoint", "-m", "quick")
    cp = json.loads(out.stdout)
    assert cp["label"] == "quick" and cp["files"] == 4 * len(FOLDERS) + 2
    with Store.open(ws) as s:
        assert s.checkpoints()[-1].id == cp["id"]
        assert cp["tree"] == _plain_tree(ws)
    human = run_cli(ws, "checkpoint", "-m", "again")
    assert human.stdout.decode().rstrip().endswith("again")
    bad = run_cli(ws, "checkpoint", "--session", "no-such-session", check=None)
    assert bad.returncode == 1 and b"no-such-session" in bad.stderr
    usage = run_cli(ws, "checkpoint", "--no-such-option", check=None)
    assert usage.returncode == 2 and b"no-such-option" in usage.stderr


def test_a_deep_tree_does_not_hold_a_descriptor_per_level(ws: Path) -> None:
    """Folders are listed through a descriptor, closed before any subfolder is listed."""
    import resource

    deep = "/".join(f"d{i}" for i in range(120))
    write(ws, f"{deep}/f.txt", "deep")
    write(ws, "d0/g.txt", "shallow")
    age_tree(ws)
    open_now = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with Store.open(ws) as s:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 40, hard))
        try:
            first = s.checkpoint()  # every file read: the serial walk
            again = s.checkpoint()  # every file from its row, then the folder records
            assert plain_scan(ws).tree == first.tree == again.tree
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert first.files == 2


def test_what_a_check_calls_before_each_listing_and_a_refusal(ws: Path) -> None:
    """``verify_folders``' ``before``: called with each folder before it is listed (the
    server's start child lays a watch there); False leaves the folder to the walk."""
    from mmap import mmap

    _workspace(ws)
    with Store.open(ws) as s:
        cache = s.scanner.statcache
        cache.load()
        folders = prescan.recorded_folders(cache.dirrecs, cache.dirtrees)
        recs = dict(cache.dirrecs)
    assert len(folders) >= 3
    refused = folders[1]
    told: list[str] = []

    def before(rel: str) -> bool:
        told.append(rel)
        return rel != refused

    shared = mmap(-1, 64)
    prescan._INT.pack_into(shared, prescan._BACK, prescan._NOT_STARTED)
    got = prescan.verify_folders(str(ws), folders, recs, shared, from_back=False,
                                 before=before)
    shared.close()
    assert told == folders, "each folder, in the order checked"
    assert set(got) == set(folders) - {refused}, "every other record still holds"


def test_a_worker_that_does_not_take_its_job_is_dropped(
    ws: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server's idle child (``fork_worker``) stopped: handing it a job larger than a
    pipe holds gives up after ``JOB_WAIT_S`` and kills it; the scan is not held."""
    import signal

    monkeypatch.setattr(prescan, "can_fork", lambda: True)
    monkeypatch.setattr(prescan, "JOB_WAIT_S", 0.3)
    worker = prescan.fork_worker(lambda fd: True)
    assert worker is not None
    pid = worker._checker.pid
    os.kill(pid, signal.SIGSTOP)
    folders = [f"folder-{i:06d}/" * 8 for i in range(4000)]  # about 300 KB: more than a pipe
    assert worker.start(str(ws), folders, {}) is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # killed and reaped already


def test_a_worker_checks_its_half_and_lays_first(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    """The idle child handed a scan's folders: ``lay`` runs in it for the folders it
    checks (seen through a file it appends to; the order is the test above's), and the
    checkpoint made with its half is the plain tree."""
    _workspace(ws)
    monkeypatch.setattr(prescan, "can_fork", lambda: True)
    log = ws.parent / "laid.txt"

    def lay(fd: int) -> bool:  # given the folder's descriptor: its path from /proc
        with open(log, "a") as f:
            f.write(os.path.relpath(os.readlink(f"/proc/self/fd/{fd}"), ws) + "\n")
        return True

    worker = prescan.fork_worker(lay)
    assert worker is not None
    with Store.open(ws) as s:
        s.scanner.worker = worker
        s.scanner.before_listing = lambda rel: time.sleep(0.05)  # the child gets its half
        cp = s.checkpoint()
        assert s.scanner.worker is None, "taken by the full scan"
    laid = log.read_text().split()
    assert laid, "the child checked some folders"
    assert {"" if r == "." else r for r in laid} <= set(ALL)
    assert cp.tree == _plain_tree(ws)


def test_a_stat_cache_header_nested_too_deep_leaves_the_worker_waiting_for_its_job(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted header of ``[[[...]]]`` (valid JSON, fitting its file and the cap) made
    ``json`` raise RecursionError in the server's worker as it read the header at once:
    the child ended before saying whether it waits for a job, and the first checkpoint
    waited ``JOB_WAIT_S`` (10 s) for it, then walked alone. Read as no records: the worker
    takes its job."""
    import struct

    monkeypatch.setattr(prescan, "can_fork", lambda: True)
    path = tmp_path / "stat.bin"
    header = b"[" * 100_000 + b"]" * 100_000
    path.write_bytes(prescan.MAGIC + struct.pack("<I", len(header)) + header
                     + struct.pack("<III", prescan.FORK_MIN_FILES, 0, 0))
    assert prescan.read_records(str(path)) is None
    worker = prescan.fork_worker(lambda fd: None, early=(str(ws), str(path)))
    assert worker is not None
    checker = worker.start(str(ws), [], {}, str(path), None)
    assert checker is not None, "the worker took its job instead of dying undecided"
    assert checker.finish([], {}) == {}


def test_a_verified_folder_is_its_file_count_its_folders_and_whether_it_has_rules(
        tmp_path: Path) -> None:
    """What a check sends for a folder whose listing matches its record: how many files
    (the walk takes their names from the recorded tree), its folders' names (listed in
    turn) and whether an ignore file is there (the walk reads its rules); nothing if the
    record does not match."""
    write(tmp_path, "a.txt", "a")
    write(tmp_path, "b.txt", "b")
    write(tmp_path, "sub/c.txt", "c")
    os.symlink("a.txt", tmp_path / "link")

    def check(want: str | None) -> prescan.Verified | None:
        with os.scandir(tmp_path) as it:
            listing = sorted(it, key=lambda de: de.name)
        sts = [de.stat(follow_symlinks=False) for de in listing]
        return prescan.matching(listing, sts, want if want is not None
                                else prescan.listing_key(listing, sts))

    assert check(None) == (3, ["sub"], False)  # a link counts as a file, as in the tree
    assert check("0" * 32) is None
    write(tmp_path, ".turnbackignore", "*.log\n")
    assert check(None) == (4, ["sub"], True)


def _change_after_the_check(ws: Path, change: str) -> None:
    """One change made after the early child verified every folder, before the scan."""
    if change == "file added":
        write(ws, "a/x/new.txt", "new")
    elif change == "file removed":
        (ws / "b/y/f2.txt").unlink()
    elif change == "same size and mtime":  # rewritten in place, its mtime put back
        p = ws / "c/z/f1.txt"
        st = p.stat()
        p.write_text("c/z 9")
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif change == "case-only rename":
        (ws / "d/f0.txt").rename(ws / "d/F0.txt")
    elif change == "ignore file added":  # a verified folder without rules gets some
        write(ws, "c/.gitignore", "f*.txt\n")
    elif change == "folder replaced by a link":
        os.rename(ws / "a/x", ws / "a/x-old")
        os.symlink("x-old", ws / "a/x")
    else:
        raise AssertionError(change)


@pytest.mark.parametrize("change", ["file added", "file removed", "same size and mtime",
                                    "case-only rename", "ignore file added",
                                    "folder replaced by a link"])
def test_a_change_after_the_early_check_is_in_the_next_checkpoint(
        ws: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """Red-team (branch redteam11): the early child hands back each verified folder's
    file count, not its names, and the walk takes the files from the recorded tree. A
    change made after the child checked (before the scan) leaves the first checkpoint the
    workspace as the command was given (never a mix of the two states, nor a file of
    the record the listing lacks), and the next checkpoint the workspace as it is."""
    _workspace(ws)
    given = _plain_tree(ws)
    took = _taken(monkeypatch)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    _early_has(_stat_path(ws.resolve()), checked_all=True)
    _change_after_the_check(ws, change)
    with _cold(ws) as s:
        first = s.checkpoint()
    assert took == [True]
    assert first.tree == given
    with _cold(ws) as s:
        second = s.checkpoint()
    assert second.tree == _plain_tree(ws) != given
    _no_child_left()


def test_a_link_swapped_in_above_a_folder_during_the_early_check_is_not_followed(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team (branch redteam11): a folder moved away and a link to it put at its name
    (``mv a a-old; ln -s a-old a``) while the early child checks, a real folder back at
    the name (a copy, then edited) before the scan. The child opened ``a/x`` by its path,
    which follows a link part-way along it: it verified ``a-old/x`` as ``a/x``, and the
    first checkpoint recorded the old ``a/x`` under the new ``a`` (a tree the workspace
    never held: ``a`` was a link then, a folder with other files now). Opened from the
    folder above without following a link (as the server's worker does), ``a/x`` is
    left to the walk."""
    import shutil

    _workspace(ws)
    os.rename(ws / "a", ws / "a-old")
    os.symlink("a-old", ws / "a")
    took = _taken(monkeypatch)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    _early_has(_stat_path(ws.resolve()), checked_all=True)
    (ws / "a").unlink()
    shutil.copytree(ws / "a-old", ws / "a", symlinks=True)
    write(ws, "a/x/f1.txt", "edited in the copy")
    write(ws, "a/x/new.txt", "new in the copy")
    with _cold(ws) as s:
        first = s.checkpoint()
    assert took == [True]
    assert first.tree == _plain_tree(ws)
    _no_child_left()


def test_folders_whose_names_are_not_utf8_are_handed_back_and_taken_from_records(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team (branch redteam11): the early child hands back its verified folders'
    folder names (``marshal``); one whose name is not UTF-8 (a surrogate once decoded)
    comes back whole, is taken from its record, and a file added in it after the check
    is in the next checkpoint."""
    _workspace(ws)
    odd = os.fsdecode(b"c/z/\xff\xfe-dir")
    os.mkdir(ws / odd)
    for i in range(3):
        write(ws, f"{odd}/g{i}.txt", f"odd {i}")
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()  # its files matched their rows: the odd folder gets a record
    took = _taken(monkeypatch)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    _early_has(_stat_path(ws.resolve()), checked_all=True)
    listed = _listed(monkeypatch)
    with _cold(ws) as s:
        first = s.checkpoint()
    assert took == [True] and listed == [], "every folder taken from its record"
    assert first.tree == _plain_tree(ws)
    write(ws, f"{odd}/new.txt", "new")
    with _cold(ws) as s:
        assert s.checkpoint().tree == _plain_tree(ws) != first.tree
    _no_child_left()


@pytest.mark.parametrize("raw", [
    b'{"dirrecs": {"a": "0f"}, "dirtrees": {"a": ["h", 1, 2, 3]}, "n": [1, -2.5, 3e5]}',
    b' \n\t{"t": true, "f": false, "z": null, "s": "\\u00e9\\ud800\\n"}\r\n',
    b"[NaN, Infinity, -Infinity]",
    b'"alone"',
])
def test_the_early_childs_json_reads_what_json_reads(raw: bytes) -> None:
    """``prescan.json_loads`` (the early child's, without importing ``json``) gives what
    ``json.loads`` gives: the child's records must be the scan's."""
    import json

    assert repr(prescan.json_loads(raw)) == repr(json.loads(raw))


@pytest.mark.parametrize("raw", [b"", b"  ", b"{} x", b'{"a": 1}{}', b"{", b"[1,]", b"tru",
                                 b"\xff{}", b'{"a": "\x01"}'])
def test_the_early_childs_json_refuses_what_json_refuses(raw: bytes) -> None:
    import json

    with pytest.raises(ValueError):
        json.loads(raw)
    with pytest.raises((ValueError, StopIteration)):
        prescan.json_loads(raw)


def test_the_early_child_reads_the_stat_cache_without_importing_json(ws: Path) -> None:
    """The header of a real stat cache, read as the early child reads it, in a process
    that has imported nothing else (``json`` and its ``re``, ``enum``, ``functools`` are
    ~6 ms of CPU the CLI spent before its fork): the records ``json`` reads, and
    ``json`` not imported."""
    import json
    import subprocess

    _workspace(ws)
    path = _stat_path(ws)
    code = ("import sys; from turnback.snapshot import prescan; "
            f"got = prescan.read_records({path!r}); "
            "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules)); "
            "print(repr(got[1:]) if got else None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    imported, records = out.stdout.splitlines()
    assert imported == "[]"
    raw = Path(path).read_bytes()
    (hlen,) = prescan.U32.unpack_from(raw, len(prescan.MAGIC))
    start = len(prescan.MAGIC) + prescan.U32.size
    header = json.loads(raw[start:start + hlen])
    (files,) = prescan.U32.unpack_from(raw, start + hlen)
    assert header["dirrecs"], "the workspace's folders are recorded"
    assert records == repr((header["dirrecs"], header["dirtrees"], files))


def test_the_two_ends_cover_every_folder_and_agree_where_they_meet(ws: Path) -> None:
    """The child checks from the front and this process from the back, each stopping short
    of what the other has finished (``verify_folders``): wherever they meet, every folder
    is checked by one side or both, and the one both may check merges to the same answer
    (``Checker.finish``: ``{**found, **verified}``) as one process checking them all."""
    from mmap import mmap

    _workspace(ws)
    got = prescan.read_records(_stat_path(ws))
    assert got is not None
    recs = got[1]
    folders = prescan.recorded_folders(recs, got[2])

    def one_side(from_back: bool, other: int) -> dict[str, prescan.Verified]:
        shared = mmap(-1, prescan._SHARED_SIZE)
        try:
            # the other side's counter, as it stands: the front's finished count, or
            # the lowest index the back has finished
            prescan._INT.pack_into(shared, prescan._FRONT if from_back else prescan._BACK,
                                   other)
            return prescan.verify_folders(str(ws), folders, recs, shared, from_back)
        finally:
            shared.close()

    alone = one_side(False, prescan._NOT_STARTED)
    assert sorted(alone) == sorted(folders), "a no-op: every recorded folder verified"
    for meet in range(len(folders) + 1):
        # the back has finished folders[meet:]; the front has finished folders[:meet - 1]
        # and is checking folders[meet - 1] when the back reads its counter
        front = one_side(False, meet)
        back = one_side(True, max(meet - 1, 0))
        assert set(front) == set(folders[:meet])
        assert set(back) == set(folders[max(meet - 1, 0):])
        assert set(front) & set(back) == set(folders[max(meet - 1, 0):meet])
        assert {**front, **back} == alone


def _walked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records the folders the walk goes through one by one (``Scanner._list_in``)."""
    walked: list[str] = []
    real = scan_mod.Scanner._list_in

    def list_in(self: scan_mod.Scanner, node: Any, rel_dir: str, *rest: Any) -> Any:
        walked.append(rel_dir)
        return real(self, node, rel_dir, *rest)

    monkeypatch.setattr(scan_mod.Scanner, "_list_in", list_in)
    return walked


def _no_op_cache(ws: Path) -> tuple[str, list[Any], bytes]:
    """A cold no-op's tree, what its stat cache holds after it, and the file it saved."""
    with _cold(ws) as s:
        cp = s.checkpoint()
        c = s.scanner.statcache
        held = [list(c.dirsigs.items()), list(c.dirrecs.items()), list(c.dirtrees.items()),
                {f: c.folder_rows(f) for f in ALL}]
        return cp.tree, held, c.path.read_bytes()


def test_a_no_op_with_every_folder_verified_takes_the_recorded_tree_without_a_walk(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every recorded folder verified, the ignore rules as recorded: the walk's ~10 calls
    a folder are not made (failed before: all 10 folders walked), and the tree, the stat
    cache left in memory and the file saved are the walk's, entry for entry and in order."""
    _workspace(ws)
    walked = _walked(monkeypatch)
    tree, held, saved = _no_op_cache(ws)
    assert walked == [], "no folder walked one by one"
    assert tree == _plain_tree(ws)
    walked.clear()
    assert {rel for rel, _ in held[2]} == set(ALL)
    monkeypatch.setattr(scan_mod.Scanner, "_taken_whole", lambda _self: None)
    walk_tree, walk_held, walk_saved = _no_op_cache(ws)
    assert sorted(walked) == sorted(ALL), "the walk itself went through every folder"
    assert (walk_tree, walk_held, walk_saved) == (tree, held, saved)


def test_one_changed_folder_is_walked_as_before(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    _workspace(ws)
    write(ws, "c/z/f1.txt", "changed")
    age(ws / "c" / "z" / "f1.txt")
    walked = _walked(monkeypatch)
    with _cold(ws) as s:
        tree = s.checkpoint().tree
    assert sorted(walked) == sorted(ALL)
    assert tree == _plain_tree(ws)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own: the user's real git config is never read."""
    h = tmp_path / "home"
    (h / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return h


@pytest.mark.parametrize("where", ["info/exclude", "global excludes", "settings",
                                   "nested .gitignore"])
def test_every_folder_verified_but_an_ignore_rule_changed_is_walked(
        ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """The folders' listings all hold, yet a rule outside them changed (git's
    ``info/exclude``, the user's global excludes, the store's settings), or one inside that
    their records do not cover: the recorded tree is not taken; the walk finds the file
    now ignored. (A nested ignore file's new text is in its folder's record: that folder
    fails its check, and the whole is walked too.)"""
    (ws / ".git" / "info").mkdir(parents=True)
    _workspace(ws)
    if where == "info/exclude":
        (ws / ".git" / "info" / "exclude").write_text("f3.txt\n")
    elif where == "global excludes":
        (home / ".config" / "git" / "ignore").write_text("f3.txt\n")
    elif where == "nested .gitignore":
        write(ws, "d/.gitignore", "f3.txt\n")
    walked = _walked(monkeypatch)
    with Store.open(ws, config={"ignores": ["f3.txt"]} if where == "settings" else None) as s:
        s.scanner.fork_verify = True
        cp = s.checkpoint()
        got = {p for p, _ in s.trees.walk(cp.tree, "")}
    assert walked, "walked"
    assert "f3.txt" not in got if where != "nested .gitignore" else "d/f3.txt" not in got
    assert "f2.txt" in got


def test_empty_folders_are_listed_again_not_walked(ws: Path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    """A folder recorded empty is never verified (no record of no entries is); the
    whole-tree case lists it again as the walk does, and takes the rest from the records
    (failed before: every folder walked). Anything put in it is in the next checkpoint."""
    _workspace(ws)
    (ws / "e").mkdir()
    (ws / "d" / "w" / "empty").mkdir()
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()  # the new folders' ignore signatures laid,
        s.checkpoint()  # then (trusted under them) their records and their parents'
        assert {"e", "d/w/empty"} <= set(s.scanner.statcache.dirrecs)
    walked = _walked(monkeypatch)
    with _cold(ws) as s:
        tree = s.checkpoint().tree
        c = s.scanner.statcache
        held = [list(c.dirsigs.items()), list(c.dirrecs.items()), list(c.dirtrees.items())]
    assert walked == [], "no folder walked one by one"
    assert {"e", "d/w/empty"} <= {rel for rel, _ in held[1]}
    monkeypatch.setattr(scan_mod.Scanner, "_taken_whole", lambda _self: None)
    with _cold(ws) as s:
        assert s.checkpoint().tree == tree
        c = s.scanner.statcache
        assert [list(c.dirsigs.items()), list(c.dirrecs.items()),
                list(c.dirtrees.items())] == held
    monkeypatch.undo()
    monkeypatch.setattr(prescan, "FORK_MIN_FILES", 0)
    write(ws, "d/w/empty/new.txt", "new")
    with _cold(ws) as s:
        got = {p for p, _ in s.trees.walk(s.checkpoint().tree, "")}
    assert "d/w/empty/new.txt" in got
    assert tree != _plain_tree(ws)


def test_a_no_op_checked_by_the_early_child_takes_the_recorded_tree_without_a_walk(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's way: the early child (forked before the store is opened) checks every
    folder; the scan adopts it and takes the whole tree from the records."""
    _workspace(ws)
    took = _taken(monkeypatch)
    walked = _walked(monkeypatch)
    prescan.fork_early(str(ws.resolve()), _stat_path(ws.resolve()))
    _early_has(_stat_path(ws.resolve()), checked_all=True)
    with _cold(ws) as s:
        cp = s.checkpoint()
    assert took == [True] and walked == []
    assert cp.tree == _plain_tree(ws)
    _no_child_left()


def _whole_and_walk(ws: Path, monkeypatch: pytest.MonkeyPatch,
                    config: dict[str, Any] | None = None) -> tuple[str, str, list[bool]]:
    """A cold no-op's tree (taken whole where that case holds), the walk's tree on the same
    state, and whether the whole-tree case answered (redteam32: the walk is the reference)."""
    took: list[bool] = []
    real = scan_mod.Scanner._taken_whole

    def taken(self: scan_mod.Scanner) -> Any:
        got = real(self)
        took.append(got is not None)
        return got

    trees = []
    for whole in (taken, lambda _self: None):
        with monkeypatch.context() as m:
            m.setattr(scan_mod.Scanner, "_taken_whole", whole)
            with Store.open(ws, config=config) as s:
                s.scanner.fork_verify = True
                trees.append(s.checkpoint().tree)
    return trees[0], trees[1], took


def _put_back(p: Path, st: os.stat_result) -> None:
    """``p``'s times as they were (a link's own, not its target's)."""
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)


def _attack(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch, attack: str) -> None:
    if attack == "exec bit":
        os.chmod(ws / "a/f1.txt", 0o755)
    elif attack == "same size, mtime put back":
        p = ws / "a/x/f1.txt"
        st = p.stat()
        p.write_text("a/x 9")
        _put_back(p, st)
    elif attack == "hard link of a same-size file, times put back":
        p = ws / "c/f1.txt"
        st = p.stat()
        p.unlink()
        os.link(ws / "c/f2.txt", p)
        _put_back(p, st)
    elif attack == "link retargeted, same length, times put back":
        p = ws / "b/link"
        st = os.lstat(p)
        p.unlink()
        os.symlink("f1.txt", p)
        _put_back(p, st)
    elif attack == "nested .git file appears":
        write(ws, "c/z/.git", "gitdir: /nowhere\n")
    elif attack == "core.excludesFile set in ~/.gitconfig":
        (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/ex\n")
        (home / "ex").write_text("f3.txt\n")
    elif attack == "XDG_CONFIG_HOME's git/ignore":
        (home / "xdg" / "git").mkdir(parents=True)
        (home / "xdg" / "git" / "ignore").write_text("f3.txt\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    elif attack == "a recorded folder emptied":
        for i in range(4):
            (ws / "a/x" / f"f{i}.txt").unlink()
    elif attack == "a folder recorded empty gets an ignored file":
        write(ws, "e/skip.log", "ignored")
    elif attack != "none":
        raise AssertionError(attack)


@pytest.mark.parametrize("attack", [
    "none", "exec bit", "same size, mtime put back",
    "hard link of a same-size file, times put back",
    "link retargeted, same length, times put back", "nested .git file appears",
    "core.excludesFile set in ~/.gitconfig", "XDG_CONFIG_HOME's git/ignore",
    "a recorded folder emptied", "a folder recorded empty gets an ignored file"])
def test_what_changes_under_verified_records_is_walked(
        ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch, attack: str) -> None:
    """redteam32's probes of the whole-tree case (``Scanner._taken_whole``): each change
    since the records fails a folder's check or the top folder's ignore signature, so the
    case declines and the walk answers the workspace as it is. Guards: they pass on
    cold26 (a0883d9); "none" shows the case still answers where nothing changed."""
    _workspace(ws)
    (ws / "e").mkdir()
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()
    _attack(ws, home, monkeypatch, attack)
    whole, walk, took = _whole_and_walk(ws, monkeypatch)
    assert took == [attack == "none"]
    assert whole == walk == _plain_tree(ws)


@pytest.mark.parametrize("depth", [255, 256])
def test_the_whole_tree_case_at_the_depth_bound_answers_as_the_walk(
        ws: Path, monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    """A file in the folder ``depth`` levels down: at 255 (the deepest folder a checkpoint
    holds) the case answers, and after an edit there declines; at 256 that folder is left
    out, its parent never gets a record, and the case never answers. Either way the tree
    is the walk's. Guard (passes on a0883d9)."""
    _workspace(ws)
    rel = "/".join(["n"] * depth)
    write(ws, f"{rel}/deep.txt", "deep")
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()
    whole, walk, took = _whole_and_walk(ws, monkeypatch)
    assert whole == walk and took == [depth == 255]
    write(ws, f"{rel}/deep.txt", "DEEP")
    age_tree(ws)
    edited, walk, took = _whole_and_walk(ws, monkeypatch)
    assert edited == walk and took == [False]
    assert (edited != whole) == (depth == 255)
