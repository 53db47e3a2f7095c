"""The CLI's side of the hand-off: what it hands over, and every socket it must refuse.

No real server here (``tests/server/test_handoff.py`` has those): fake ones, each a
thread on a socket at the store's path, playing a stale socket, a planted file or link,
a silent or garbage-speaking peer, or a server that dies mid-request. In each case the
command must still be done, by the process itself, and nothing printed twice.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from turnback.cli import handoff
from turnback.fs import sockets
from wsutil import cli_env, run_cli

pytestmark = pytest.mark.skipif(not sockets.available(), reason="no AF_UNIX sockets here")


@pytest.fixture
def store(ws: Path) -> Path:
    run_cli(ws, "init")
    return ws / ".turnback"


def sock_path(store: Path) -> Path:
    run = store / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    return run / "cli.sock"


@contextlib.contextmanager
def fake_server(path: Path, behave: Callable[[socket.socket], None]) -> Iterator[list[bytes]]:
    """A listening socket at ``path`` whose connections ``behave`` handles; yields what
    each connection sent."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    os.chmod(path, 0o600)
    srv.listen(8)
    got: list[bytes] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                if stop.is_set():
                    return
                conn.settimeout(5)
                try:
                    behave(conn)
                    got.append(b"handled")
                except OSError:
                    pass

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield got
    finally:
        stop.set()
        with contextlib.suppress(OSError):  # wake accept()
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(str(path))
            c.close()
        srv.close()
        t.join(5)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def answering(out: bytes) -> Callable[[socket.socket], None]:
    """A fake server's part that greets, reads the request and answers ``out``, exit 0:
    what a live server would say, for the tests that must never reach it."""

    def answer(conn: socket.socket) -> None:
        conn.sendall(sockets.GREETING)
        read_request(conn)
        conn.sendall(sockets.encode_answer(0, out, b""))

    return answer


def read_request(conn: socket.socket) -> list[str]:
    n = int.from_bytes(recv_exactly(conn, 4), "big")
    return sockets.decode_request(recv_exactly(conn, n))


def recv_exactly(conn: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        c = conn.recv(n - len(buf))
        if not c:
            raise OSError("closed")
        buf += c
    return buf


def checkpoints(ws: Path) -> int:
    import json

    env = cli_env(TURNBACK_HANDOFF="0")
    return len(json.loads(run_cli(ws, "--json", "checkpoints", env=env).stdout)["checkpoints"])


# -- what is handed over -----------------------------------------------------------------

def test_parse_reads_what_click_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNBACK_STORE", raising=False)
    monkeypatch.setenv("TURNBACK_SESSION", "s-env")
    r = handoff.parse(["-C", "/w", "--json", "checkpoint", "-m", "a label", "--auto"])
    assert r is not None and (r.verb, r.workspace, r.store, r.as_json) == (
        "checkpoint", "/w", None, True)
    assert r.options == {"label": "a label", "auto": "1", "session": "s-env"}
    r = handoff.parse(["--store=/s", "rewind", "abc", "src/a.py", "--mode", "both", "b.py"])
    assert r is not None and r.store == "/s" and r.args == ["abc", "src/a.py", "b.py"]
    assert r.options == {"mode": "both"}
    r = handoff.parse(["checkpoint", "--label=x", "--session", "s1"])
    assert r is not None and r.options == {"label": "x", "session": "s1"}


@pytest.mark.parametrize("argv", [
    [], ["gc"], ["checkpoint", "--help"], ["checkpoint", "-h"], ["checkpoint", "extra"],
    ["checkpoint", "-mLABEL"], ["checkpoint", "-m"], ["checkpoint", "-m", "-x"],
    ["checkpoint", "--"], ["rewind"], ["rewind", "a", "--mode", "sideways"],
    ["rewind", "a", "--force"], ["-C"], ["-CDIR", "status"], ["--store", "", "status"],
    ["--version"], ["status", "now"], ["undo", "x"],
])
def test_parse_leaves_the_rest_to_click(argv: list[str]) -> None:
    assert handoff.parse(argv) is None


def test_no_socket_no_handoff(store: Path) -> None:
    assert handoff.handoff(["-C", str(store.parent), "status"]) is None


def test_turned_off(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = sock_path(store)

    with fake_server(path, answering(b"from the fake\n")) as got:
        monkeypatch.setenv("TURNBACK_HANDOFF", "0")
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        assert got == []


def test_request_reaches_a_server_and_its_answer_is_printed(
        store: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = sock_path(store)
    seen: list[list[str]] = []

    def answer(conn: socket.socket) -> None:
        conn.sendall(sockets.GREETING)
        seen.append(read_request(conn))
        conn.sendall(sockets.KEEPALIVE * 3 + sockets.encode_answer(3, b"out\n", b"err\n"))

    with fake_server(path, answer):
        code = handoff.handoff(["-C", str(store.parent), "--json", "rewind", "c1", "a b.txt"])
    assert code == 3
    out, err = capfd.readouterr()
    assert (out, err) == ("out\n", "err\n")
    ws = str(store.parent.resolve())
    assert seen == [["1", "rewind", ws, os.path.join(ws, ".turnback"), "1",
                     "arg", "c1", "arg", "a b.txt"]]


# -- sockets that must not be used: the command is done by the process itself ---------------

def test_stale_socket(store: Path) -> None:
    path = sock_path(store)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))  # bound, never listening: what a killed server leaves
    os.chmod(path, 0o600)
    s.close()
    before = checkpoints(store.parent)
    proc = run_cli(store.parent, "checkpoint")
    assert proc.stdout.count(b"files,") == 1
    assert checkpoints(store.parent) == before + 1


def test_planted_file_and_link(store: Path, tmp_path: Path) -> None:
    path = sock_path(store)
    path.write_bytes(b"not a socket")
    path.chmod(0o600)
    assert handoff.handoff(["-C", str(store.parent), "status"]) is None
    path.unlink()
    # a link to a live socket that answers like a server: still refused (never followed)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)

    with fake_server(elsewhere / "s", answering(b"hijacked\n")) as got:
        path.symlink_to(elsewhere / "s")
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        proc = run_cli(store.parent, "status")
        assert b"hijacked" not in proc.stdout and b"workspace" in proc.stdout
        assert got == []


def test_run_folder_as_link_is_refused(store: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "run-elsewhere"
    elsewhere.mkdir(mode=0o700)
    (store / "run").symlink_to(elsewhere)

    with fake_server(elsewhere / "cli.sock", answering(b"hijacked\n")) as got:
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        assert got == []


def test_open_modes_are_refused(store: Path) -> None:
    path = sock_path(store)

    with fake_server(path, answering(b"x\n")) as got:
        path.chmod(0o666)
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        path.chmod(0o600)
        (store / "run").chmod(0o755)
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        (store / "run").chmod(0o700)
        assert got == []
        assert handoff.handoff(["-C", str(store.parent), "status"]) == 0  # the control


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_socket_of_another_user_is_refused(store: Path) -> None:
    path = sock_path(store)

    with fake_server(path, answering(b"x\n")) as got:
        os.chown(path, 4321, 4321)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        os.chown(path, 0, 0)
        os.chown(store / "run", 4321, 4321)
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        os.chown(store / "run", 0, 0)
        assert got == []


def test_peer_of_another_user_is_refused(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SO_PEERCRED names another uid (here: this uid is made to look like another)."""
    if not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("no SO_PEERCRED here")
    path = sock_path(store)
    st = os.lstat(store)
    calls: list[bytes] = []

    def answer(conn: socket.socket) -> None:
        conn.sendall(sockets.GREETING)
        read_request(conn)
        calls.append(b"req")
        conn.sendall(sockets.encode_answer(0, b"x\n", b""))

    real_geteuid = os.geteuid
    with fake_server(path, answer):
        monkeypatch.setattr(sockets, "private_owned", lambda s, k: True)
        monkeypatch.setattr(os, "geteuid", lambda: real_geteuid() + 1)
        assert handoff.handoff(["-C", str(store.parent), "status"]) is None
        monkeypatch.undo()
    assert calls == [] and os.lstat(store).st_uid == st.st_uid


@pytest.mark.parametrize("behaviour", ["silent", "garbage greeting", "dies after request",
                                       "garbage answer", "declines", "truncated answer"])
def test_misbehaving_server_falls_back(store: Path, behaviour: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = sock_path(store)
    monkeypatch.setattr(sockets, "CONNECT_TIMEOUT_S", 0.5)
    release = threading.Event()

    def behave(conn: socket.socket) -> None:
        if behaviour == "silent":
            release.wait(10)
            return
        if behaviour == "garbage greeting":
            conn.sendall(b"SSH-2.0-OpenSSH\r\n")
            return
        conn.sendall(sockets.GREETING)
        read_request(conn)
        if behaviour == "garbage answer":
            conn.sendall(b"=banana\n")
        elif behaviour == "declines":
            conn.sendall(sockets.encode_answer(sockets.DECLINED, b"", b""))
        elif behaviour == "truncated answer":
            conn.sendall(sockets.ANSWER + b"0 100 0\nonly a little")

    with fake_server(path, behave):
        try:
            assert handoff.handoff(["-C", str(store.parent), "checkpoint"]) is None
        finally:
            release.set()
        # and the command line itself: done in-process, printed once
        before = checkpoints(store.parent)
        env = cli_env()
        release.clear()
        try:
            proc = run_cli(store.parent, "checkpoint", env=env)
        finally:
            release.set()
        assert proc.stdout.count(b"files,") == 1
        assert checkpoints(store.parent) == before + 1


def test_long_store_path_has_no_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    assert sockets.socket_path(str(deep)) is None
    assert sockets.socket_path(str(tmp_path)) is not None

