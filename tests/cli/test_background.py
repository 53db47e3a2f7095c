"""The background server a fresh CLI leaves running (``cli/background.py``,
``server/background.py``): started once, handed the next call, gone when idle, when its store
goes, when asked; and never started where it must not be.

Every test here turns it on explicitly (the suite runs with ``TURNBACK_BACKGROUND=0``), waits
for conditions, never for a fixed time, and ends every server it started (``reaper``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from turnback.cli import background
from turnback.fs import locks, sockets
from turnback.store import background_lock
from wsutil import cli_env, run_cli

pytestmark = pytest.mark.skipif(not sockets.available(), reason="no AF_UNIX sockets here")

WAIT_S = 60.0  # a loaded 2-core machine starts a Python server in seconds, not minutes


def on(**extra: str) -> dict[str, str]:
    return cli_env(TURNBACK_BACKGROUND="1", TURNBACK_LOG="debug", **extra)


def wait_for(cond: Callable[[], object], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not so after {timeout:g} s: {what}")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (its parent has not reaped it yet) has left
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


@pytest.fixture
def store(ws: Path) -> Path:
    (ws / "a.txt").write_text("a\n")
    run_cli(ws, "checkpoint", "-m", "first")  # TURNBACK_BACKGROUND=0: nothing started
    return ws / ".turnback"


@pytest.fixture
def reaper(store: Path) -> Iterator[list[int]]:
    """Pids of background servers a test saw; each is ended afterwards, whatever happened."""
    pids: list[int] = []
    yield pids
    pid = background_lock.holder(store)
    if pid is not None:
        pids.append(pid)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        wait_for(lambda pid=pid: not alive(pid), f"server {pid} killed")  # type: ignore[misc]


def started(store: Path, reaper: list[int]) -> int:
    """The pid of the background server of ``store``, once it serves the socket."""
    wait_for(lambda: background_lock.holder(store) is not None, "a background server started")
    pid = background_lock.holder(store)
    assert pid is not None
    reaper.append(pid)
    path = str(store / "run" / "cli.sock")
    wait_for(lambda: sockets.usable_socket(path) and sockets.answers(path), "its socket")
    return pid


def handed_off(store: Path) -> list[str]:
    log = store / "run" / "background.log"
    return [line for line in log.read_text().splitlines() if "CLI hand-off: " in line]


def test_started_once_then_handed_the_next_call(ws: Path, store: Path,
                                                reaper: list[int]) -> None:
    run_cli(ws, "checkpoint", "-m", "second", env=on())
    pid = started(store, reaper)
    assert handed_off(store) == []
    (ws / "a.txt").write_text("changed\n")
    out = json.loads(run_cli(ws, "--json", "checkpoint", "-m", "third", env=on()).stdout)
    assert out["label"] == "third" and out["files"] == 1
    assert len(handed_off(store)) == 1
    # the server walked once at start (Store.prepare(None)); the change after it is in
    assert run_cli(ws, "show", "latest", "a.txt", env=on()).stdout == b"changed\n"
    assert background_lock.holder(store) == pid  # the same server: no second one
    status = json.loads(run_cli(ws, "--json", "status", env=on()).stdout)
    assert status["background"] == {"pid": pid} and status["checkpoints"] == 3
    assert "pid" in run_cli(ws, "status", env=on()).stdout.decode()
    # the run folder stays private, the socket 0600
    run = store / "run"
    assert stat.S_IMODE(os.lstat(run).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(run / "cli.sock").st_mode) == 0o600
    stopped = run_cli(ws, "serve", "--stop", env=on())
    assert f"pid {pid}" in stopped.stdout.decode()
    wait_for(lambda: not alive(pid), "the server left when asked")
    assert not (run / "cli.sock").exists() and background_lock.holder(store) is None
    status = json.loads(run_cli(ws, "--json", "status").stdout)
    assert status["background"] is None
    assert "no background server" in run_cli(ws, "serve", "--stop").stdout.decode()


def test_an_agents_hook_starts_one(ws: Path, store: Path, reaper: list[int]) -> None:
    stop = {"session_id": "s-hook", "hook_event_name": "Stop", "cwd": str(ws),
            "stop_hook_active": False}
    run_cli(ws, "-C", str(ws), "hook", "claude-code", "Stop", input=json.dumps(stop).encode(),
            env=on())
    started(store, reaper)
    run_cli(ws, "-C", str(ws), "hook", "claude-code", "Stop", input=json.dumps(stop).encode(),
            env=on())
    assert len(handed_off(store)) == 1  # the second hook's checkpoint, by the server


def test_leaves_when_idle(ws: Path, store: Path, reaper: list[int]) -> None:
    run_cli(ws, "checkpoint", env=on(TURNBACK_BACKGROUND_IDLE="0.5"))
    pid = started(store, reaper)
    wait_for(lambda: not alive(pid), "the idle server left")
    assert not (store / "run" / "cli.sock").exists()
    assert "no request for 0.5 s" in (store / "run" / "background.log").read_text()
    # and the next call starts one again: nothing of the last one is in the way
    run_cli(ws, "checkpoint", env=on())
    assert started(store, reaper) != pid


def removed(store: Path) -> bool:
    shutil.rmtree(store, ignore_errors=True)
    return not store.exists()


def test_leaves_when_its_store_goes(ws: Path, store: Path, reaper: list[int]) -> None:
    run_cli(ws, "rewind", "latest", env=on())
    pid = started(store, reaper)
    # The server may still be writing into the store (its first walk's objects and caches): a
    # file made between rmtree's listing and its rmdir fails that pass, so remove until gone.
    wait_for(lambda: removed(store), "the store removed under its running server")
    wait_for(lambda: not alive(pid), "the server left with its store")
    assert not store.exists()  # it made nothing again on its way out


def test_a_crashed_server_blocks_nothing(ws: Path, store: Path, reaper: list[int]) -> None:
    run_cli(ws, "checkpoint", env=on())
    pid = started(store, reaper)
    os.kill(pid, signal.SIGKILL)  # its socket and lock file stay behind
    wait_for(lambda: not alive(pid), "the server killed")
    assert (store / "run" / "cli.sock").exists()
    out = run_cli(ws, "--json", "checkpoint", "-m", "alone", env=on())  # refused: alone
    assert json.loads(out.stdout)["label"] == "alone"
    assert started(store, reaper) != pid


def test_a_stale_socket_is_replaced(ws: Path, store: Path, reaper: list[int]) -> None:
    run = store / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(run / "cli.sock"))  # bound, never listening: connect is refused
    os.chmod(run / "cli.sock", 0o600)
    stale.close()
    run_cli(ws, "checkpoint", env=on())
    started(store, reaper)
    run_cli(ws, "checkpoint", env=on())
    assert len(handed_off(store)) == 1


def test_one_server_per_store(ws: Path, store: Path, reaper: list[int]) -> None:
    run_cli(ws, "checkpoint", env=on())
    pid = started(store, reaper)
    # a second one asked for by hand finds the socket served and the lock held
    again = run_cli(ws, "serve", "--headless", env=on(), check=None)
    assert again.returncode == 0 and b"already serves" in again.stdout
    assert background_lock.holder(store) == pid


# -- where nothing is started (checked without starting anything) -----------------------------

@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """What ``background.start`` would have run; nothing is."""
    import subprocess

    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda args, **_kw: calls.append(args))
    monkeypatch.setenv("TURNBACK_BACKGROUND", "1")
    return calls


def try_start(ws: Path, store: Path) -> None:
    background.start(background.wanted(str(ws), str(store)))


def test_started_where_it_may(ws: Path, store: Path, spawned: list[list[str]]) -> None:
    try_start(ws, store)
    assert len(spawned) == 1 and spawned[0][-2:] == ["serve", "--headless"]


def test_not_when_turned_off(ws: Path, store: Path, spawned: list[list[str]],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNBACK_BACKGROUND", "0")
    try_start(ws, store)
    monkeypatch.setenv("TURNBACK_BACKGROUND", "1")
    config = json.loads((store / "config.json").read_text())
    for value in (False, "no", None):  # off, and values that are not a setting: no start
        (store / "config.json").write_text(json.dumps({**config, "background": value}))
        try_start(ws, store)
    assert spawned == []
    assert background.candidate(["-C", str(ws), "checkpoint"]) is not None  # start decides


def test_not_without_a_store(ws: Path, tmp_path: Path, spawned: list[list[str]]) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    assert background.candidate(["-C", str(bare), "checkpoint"]) is None
    try_start(bare, bare / ".turnback")
    assert spawned == [] and not (bare / ".turnback").exists()


def test_not_for_a_linked_store(ws: Path, store: Path, tmp_path: Path,
                                spawned: list[list[str]]) -> None:
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(store, other / ".turnback")
    try_start(other, other / ".turnback")
    assert spawned == []


def test_not_for_a_store_of_another_user(ws: Path, store: Path, spawned: list[list[str]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: os.lstat(store).st_uid + 1)
    try_start(ws, store)
    assert spawned == []


def test_not_while_another_holds_the_lock(ws: Path, store: Path,
                                          spawned: list[list[str]]) -> None:
    path = background_lock.lock_path(store)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_text("12345")
    fd = os.open(path, os.O_RDWR)
    try:
        assert locks.backend().try_lock(fd, True)
        assert background_lock.holder(store) == 12345
        try_start(ws, store)
        assert spawned == []
    finally:
        os.close(fd)
    assert background_lock.holder(store) is None


def test_a_planted_lock_link_is_refused(ws: Path, store: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    run = store / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    os.symlink(target, background_lock.lock_path(store))
    assert background_lock.holder(store) is None
    with pytest.raises(OSError):
        background_lock.take(store)
    res = run_cli(ws, "serve", "--headless", env=on(), check=None)
    assert res.returncode == 1 and target.read_text() == "keep\n"
    assert not (run / "cli.sock").exists()


def test_a_damaged_store_is_named_in_its_log(ws: Path, store: Path) -> None:
    (store / "config.json").write_text("{")
    res = run_cli(ws, "serve", "--headless", env=on(), check=None)
    assert res.returncode == 1 and (store / "config.json").read_text() == "{"
    log = (store / "run" / "background.log").read_text()
    assert "the background server failed" in log and "config.json" in log
    assert not (store / "run" / "cli.sock").exists() and background_lock.holder(store) is None
