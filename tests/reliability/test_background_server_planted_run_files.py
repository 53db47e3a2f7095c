"""A red-team pass over the background server (``server/background.py``,
``store/background_lock.py``): files planted in the store's ``run/`` folder (a repository
that commits its ``.turnback``, a synced folder, an archive unpacked over the workspace) and a
store swapped for a link (docs/RELIABILITY.md, "A red-team pass over the background server").

Each server is run in the foreground (``serve --headless``) with a short idle limit, so it
leaves by itself; nothing waits a fixed time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from turnback.fs import sockets
from turnback.store import background_lock
from wsutil import cli_env, run_cli

pytestmark = pytest.mark.skipif(not sockets.available(), reason="no AF_UNIX sockets here")

WAIT_S = 60.0  # a loaded 2-core machine starts a Python server in seconds, not minutes


@pytest.fixture
def store(ws: Path) -> Path:
    (ws / "a.txt").write_text("a\n")
    run_cli(ws, "checkpoint", "-m", "first")
    run = ws / ".turnback" / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    return ws / ".turnback"


def headless(ws: Path) -> subprocess.CompletedProcess[bytes]:
    """``turnback serve --headless`` for ``ws``, idle after half a second; a server that
    hangs fails the test at ``WAIT_S`` (and is killed by ``subprocess.run``)."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "turnback.cli.main", "-C", str(ws), "serve", "--headless"],
            cwd=ws, capture_output=True, timeout=WAIT_S,
            env=cli_env(TURNBACK_BACKGROUND="1", TURNBACK_BACKGROUND_IDLE="0.5"))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the background server still runs after {WAIT_S:g} s") from None


def test_a_fifo_planted_as_its_log_is_not_waited_on(ws: Path, store: Path) -> None:
    log = store / "run" / "background.log"
    os.mkfifo(log)
    res = headless(ws)
    assert res.returncode == 0, res.stdout + res.stderr
    assert b"no request for 0.5 s" in res.stderr  # it served, logging where it could
    assert background_lock.holder(store) is None
    assert not (store / "run" / "cli.sock").exists()


def test_a_huge_planted_log_is_started_over(ws: Path, store: Path) -> None:
    """Held: a log file of 4 GiB (sparse) is started over at the first line, not grown."""
    log = store / "run" / "background.log"
    with open(log, "wb") as f:
        f.truncate(4 << 30)
    os.chmod(log, 0o600)
    res = headless(ws)
    assert res.returncode == 0
    assert 0 < log.stat().st_size < 1 << 20 and b"no request for 0.5 s" in log.read_bytes()


@pytest.mark.parametrize("name", ["background.lock", "background.log"])
def test_a_hard_link_planted_in_run_is_never_written(ws: Path, store: Path, tmp_path: Path,
                                                     name: str) -> None:
    victim = tmp_path / "victim"
    data = b"keep me\n" * (1 << 18)  # 2 MiB: past the log's 1 MiB, where it starts over
    victim.write_bytes(data)
    os.link(victim, store / "run" / name)
    res = headless(ws)
    assert victim.read_bytes() == data
    if name == "background.lock":
        assert res.returncode == 1 and b"remove it" in res.stdout
    else:
        assert res.returncode == 0 and b"no request for 0.5 s" in res.stderr
    assert not (store / "run" / "cli.sock").exists()


def test_a_store_swapped_for_a_link_gets_nothing_written_through_it(
        ws: Path, store: Path, tmp_path: Path) -> None:
    """``serve --headless`` run on a workspace whose ``.turnback`` is a link (the CLI checks
    this before it starts one; the link may be put there after): nothing made at the far
    end of the link, no server."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.json").write_text((store / "config.json").read_text())
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(elsewhere, other / ".turnback")
    res = headless(other)
    assert res.returncode == 1 and b"link" in res.stdout
    assert sorted(os.listdir(elsewhere)) == ["config.json"]


@pytest.mark.parametrize("value", ["false", 0, None])
def test_an_odd_background_setting_is_named_and_starts_nothing(ws: Path, store: Path,
                                                                value: object) -> None:
    """Held: ``"background"`` is a boolean or the store is refused with its name; the hook's
    own work is done all the same (the CLI alone), and no server is left behind."""
    config = json.loads((store / "config.json").read_text())
    (store / "config.json").write_text(json.dumps({**config, "background": value}))
    res = run_cli(ws, "checkpoint", env=cli_env(TURNBACK_BACKGROUND="1"), check=None)
    assert res.returncode == 1 and b"background" in res.stderr
    assert background_lock.holder(store) is None
    assert not (store / "run" / "cli.sock").exists()


def test_a_planted_summary_index_cannot_rename_a_session(ws: Path) -> None:
    """The session listing's summary index (``index/summaries.json``, a cache) names each
    entry twice, by its key and in its header; a planted entry whose header names another
    id (a path, another session's) was listed under that id while its file matched."""
    from turnback.store.facade import Store

    store = Store.open(ws, create=True)
    sid = store.start_session(title="mine").id
    store.append(sid, "prompt", {"text": "hi"})
    assert [s.header.id for s in store.sessions()[0]] == [sid]
    store.close()
    index = ws / ".turnback" / "index" / "summaries.json"
    data = json.loads(index.read_text())
    data["sessions"][sid]["header"]["id"] = "../../elsewhere"
    index.write_text(json.dumps(data))
    store = Store.open(ws)
    try:
        listed = store.sessions()[0]
        assert [(s.header.id, s.header.title) for s in listed] == [(sid, "mine")]
    finally:
        store.close()


def test_a_store_replaced_under_it_gets_none_of_its_caches(ws: Path, store: Path,
                                                          tmp_path: Path) -> None:
    """The store swapped for a new one while a background server runs (restored from a
    backup, ``rm -rf .turnback && turnback init``): the server leaves, and writes nothing of
    the old store into the new one. It saved its stat cache there on its way out: the next
    checkpoint then named the old store's objects, and the files it held could not be
    restored (fsck: "damaged checkpoint")."""
    import signal

    from turnback.store.facade import Store

    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "turnback.cli.main", "-C", str(ws), "serve", "--headless"],
        cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=cli_env(TURNBACK_BACKGROUND="1", TURNBACK_LOG="debug"))
    try:
        sock = str(store / "run" / "cli.sock")
        deadline = time.monotonic() + WAIT_S
        while not (sockets.usable_socket(sock) and sockets.answers(sock)):
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.05)
        # handed to it, so after its first walk (which fills its stat cache)
        run_cli(ws, "checkpoint", env=cli_env(TURNBACK_BACKGROUND="1"))
        assert b"CLI hand-off" in (store / "run" / "background.log").read_bytes()
        os.kill(server.pid, signal.SIGSTOP)  # the swap happens between two of its looks
        try:
            os.rename(store, tmp_path / "old-store")
            Store.open(ws, create=True).close()
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert server.wait(WAIT_S) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    run_cli(ws, "checkpoint", "-m", "in the new store")
    assert run_cli(ws, "fsck", check=None).returncode == 0
    (ws / "f1.txt").unlink()
    run_cli(ws, "rewind", "latest")
    assert (ws / "f1.txt").read_text() == "file 1\n"


def test_a_store_kept_open_refuses_to_write_into_one_put_in_its_place(
        ws: Path, tmp_path: Path) -> None:
    """What an editor's server holds: a ``Store`` open across ``mv .turnback old && turnback
    init``. Its next checkpoint trusted its stat cache and recorded the old store's objects
    (fsck: "damaged checkpoint"; the files could not be restored); now it refuses, naming the
    store and what to do, and its close writes nothing into the new store."""
    from turnback.errors import Conflict
    from turnback.store.facade import Store

    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    kept = Store.open(ws, create=True)
    try:
        kept.checkpoint(label="one")
        os.rename(ws / ".turnback", tmp_path / "old-store")
        Store.open(ws, create=True).close()
        (ws / "f1.txt").write_text("changed\n")
        with pytest.raises(Conflict, match="was replaced"):
            kept.checkpoint(label="by the kept store")
        with pytest.raises(Conflict, match="reload"):
            kept.prepare(None)
    finally:
        kept.close()
    assert not (ws / ".turnback" / "cache" / "stat.bin").exists()
    assert run_cli(ws, "checkpoints").stdout == b""
    run_cli(ws, "checkpoint", "-m", "in the new store")
    assert run_cli(ws, "fsck", check=None).returncode == 0
    (ws / "f2.txt").unlink()
    run_cli(ws, "rewind", "latest")
    assert (ws / "f2.txt").read_text() == "file 2\n"


def test_the_server_a_cli_starts_trusts_the_store_as_that_cli_did(
        ws: Path, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store whose ``objects/`` is a link to a folder elsewhere (a copied store): the CLI
    refuses it, then started a background server anyway, with ``--store`` (a store the user
    named, whose inner links are not looked at): that server opened it, packed the
    workspace through the link, and served the next calls the CLI refuses."""
    from turnback.cli import background

    outside = tmp_path / "outside"
    (store / "objects").rename(outside)
    os.symlink(outside, store / "objects")
    before = sorted(p.name for p in outside.rglob("*"))
    (ws / "b.txt").write_text("b\n")
    spawned: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda args, **_kw: spawned.append(args))
    monkeypatch.setenv("TURNBACK_BACKGROUND", "1")
    background.start(background.wanted(str(ws), str(store)))
    monkeypatch.undo()
    assert len(spawned) == 1
    res = subprocess.run(spawned[0], cwd="/", capture_output=True, timeout=WAIT_S,
                         env=cli_env(TURNBACK_BACKGROUND="1", TURNBACK_BACKGROUND_IDLE="0.5"))
    assert res.returncode == 1
    assert sorted(p.name for p in outside.rglob("*")) == before
    assert b"symbolic link" in (store / "run" / "background.log").read_bytes()


@pytest.mark.parametrize("raw", ["inf", "1e300", "nan", "-5", "0", "soon"])
def test_an_idle_time_for_ever_is_bounded_and_said(
        raw: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``TURNBACK_BACKGROUND_IDLE=inf`` (or 1e300) in the user's environment kept a
    background server for ever; NaN, 0 or below, or not a number, took the default
    silently. Now at most a day, and the log says which value was used instead of what."""
    import logging

    from turnback.server import background

    monkeypatch.setenv("TURNBACK_BACKGROUND_IDLE", raw)
    caplog.set_level(logging.WARNING, logger="turnback.server")
    used = background.idle_limit()
    assert 0 < used <= 86400
    assert used == (86400 if raw in ("inf", "1e300") else 1800)
    told = [r.getMessage() for r in caplog.records]
    assert len(told) == 1 and "TURNBACK_BACKGROUND_IDLE" in told[0] and repr(raw) in told[0]
    assert f"{used:g} s" in told[0]


def test_an_idle_time_in_range_is_taken_as_it_is(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from turnback.server import background

    monkeypatch.setenv("TURNBACK_BACKGROUND_IDLE", "0.5")
    assert background.idle_limit() == 0.5 and not caplog.records
    monkeypatch.delenv("TURNBACK_BACKGROUND_IDLE")
    assert background.idle_limit() == 1800 and not caplog.records


@pytest.mark.parametrize(("raw", "used"), [
    ("-0", 1800), ("0x10", 1800), ("  ", 1800), ("60s", 1800), ("-inf", 1800),
    ("9" * 100_000, 86400), ("Infinity", 86400), (" 60 ", 60), ("1_0", 10), ("1e-300", 1e-300),
])
def test_odd_idle_times_are_bounded_and_said_in_a_bounded_line(
        raw: str, used: float, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The red-team pass over the bound (held): ``-0`` is not above 0, ``0x10`` not a
    number to ``float``; blanks around a number and ``_`` between digits are ``float``'s
    own syntax, taken; a 100,000-digit value is bounded, and said in a line of at most 40 of
    its characters; ``1e-300`` is above 0, taken as the user gave it (the server leaves at
    its first look, ``CHECK_S``)."""
    import logging

    from turnback.server import background

    monkeypatch.setenv("TURNBACK_BACKGROUND_IDLE", raw)
    caplog.set_level(logging.WARNING, logger="turnback.server")
    assert background.idle_limit() == used
    told = [r.getMessage() for r in caplog.records]
    assert len(told) == (0 if used in (60, 10, 1e-300) else 1)
    assert all(len(line) < 300 for line in told)
