"""The server's side of the CLI hand-off, against a real server process.

What a hand-off prints must be what the CLI prints working alone (``TURNBACK_HANDOFF=0``):
byte for byte where nothing differs between the two calls (status, a dry run, an
error), field for field where the call itself makes something new (a checkpoint's id).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from turnback.cli import handoff
from turnback.fs import sockets
from turnback.server.jobs import handoff as server_handoff
from wsutil import picture

from .conftest import config, folder_params, kill_and_stop, server_env, started

pytestmark = pytest.mark.skipif(not sockets.available(), reason="no AF_UNIX sockets here")


def cli(ws: Path, *args: str, alone: bool = False) -> subprocess.CompletedProcess[bytes]:
    env = server_env(**({"TURNBACK_HANDOFF": "0"} if alone else {}))
    return subprocess.run([sys.executable, "-m", "turnback.cli.main", "-C", str(ws), *args],
                          env=env, capture_output=True, timeout=120)


async def handed(ws: Path, *args: str) -> tuple[int, bytes, bytes]:
    """``turnback -C WS ARGS`` through the server's socket; fails if not handed off."""
    found = handoff.request_for(["-C", str(ws), *args])
    assert found is not None, "no usable socket"
    answer = await asyncio.to_thread(handoff.exchange, *found)
    assert answer is not None, "the server did not answer"
    return answer


async def wait_socket(ws: Path) -> None:
    """Until a server listens on the store's socket (the server lays it once its first
    answers are out: a stale socket may still be there before that)."""
    path = ws / ".turnback" / "run" / "cli.sock"
    for _ in range(500):
        if sockets.usable_socket(str(path)) and server_handoff._alive(str(path)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server made no socket")


def with_store(ws: Path) -> Path:
    assert cli(ws, "init", alone=True).returncode == 0
    return ws


async def test_same_output_as_the_cli_alone(ws: Path) -> None:
    with_store(ws)
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        code, out, err = await handed(ws, "--json", "checkpoint", "-m", "first")
        assert (code, err) == (0, b"")
        first = json.loads(out)
        alone = cli(ws, "--json", "checkpoint", "-m", "first", alone=True)
        again = json.loads(alone.stdout)
        assert first.keys() == again.keys()
        same = ("label", "tree", "files", "bytes", "skipped", "absent", "sessionId", "auto",
                "partial")
        assert {k: first[k] for k in same} == {k: again[k] for k in same}
        assert out.count(b"\n") == alone.stdout.count(b"\n")  # the same indentation

        for args in (["status"], ["--json", "status"], ["rewind", "nope"],
                     ["--json", "rewind", "nope"]):
            code, out, err = await handed(ws, *args)
            alone = cli(ws, *args, alone=True)
            assert (code, out, err) == (alone.returncode, alone.stdout, alone.stderr), args

        (ws / "README.md").write_text("changed\n")
        (ws / "new.txt").write_text("new\n")
        os.unlink(ws / "data.bin")
        dry = ["--json", "rewind", first["id"], "--dry-run"]
        code, out, err = await handed(ws, *dry)
        alone = cli(ws, *dry, alone=True)
        assert (code, out, err) == (alone.returncode, alone.stdout, alone.stderr)
        planned = json.loads(out)
        assert planned["overwritten"] == ["README.md"] and planned["removed"] == ["new.txt"]

        code, out, err = await handed(ws, "--json", "rewind", first["id"])
        done = json.loads(out)
        assert code == 0 and done["safetyCheckpoint"]
        for k in ("overwritten", "created", "removed", "mode", "checkpoint"):
            assert done[k] == planned[k]
        assert (ws / "README.md").read_text() == "# demo\n" and not (ws / "new.txt").exists()
        code, out, err = await handed(ws, "undo")
        assert code == 0 and b"undo: 3 file(s)" in out
        assert (ws / "README.md").read_text() == "changed\n"


async def test_concurrent_cli_calls(ws: Path) -> None:
    with_store(ws)
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        n = 6

        async def one(i: int) -> dict[str, Any]:
            (ws / f"f{i}.txt").write_text(f"{i}\n")
            code, out, err = await handed(ws, "--json", "checkpoint", "-m", f"c{i}")
            assert (code, err) == (0, b"")
            return dict(json.loads(out))

        cps = await asyncio.gather(*(one(i) for i in range(n)))
        assert len({c["id"] for c in cps}) == n
        listed = json.loads(cli(ws, "--json", "checkpoints", alone=True).stdout)["checkpoints"]
        assert {c["id"] for c in cps} <= {c["id"] for c in listed}
        # and the command line, several at once (each hands off or works alone: both fine)
        procs = [subprocess.Popen([sys.executable, "-m", "turnback.cli.main", "-C", str(ws),
                                   "--json", "checkpoint"], env=server_env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(4)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        assert len({json.loads(o)["id"] for o, _ in outs}) == 4


async def test_socket_goes_with_the_server(ws: Path) -> None:
    with_store(ws)
    path = ws / ".turnback" / "run" / "cli.sock"
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
    assert not path.exists()
    proc = cli(ws, "checkpoint")
    assert proc.returncode == 0 and proc.stdout.count(b"files,") == 1


async def test_server_killed_leaves_a_stale_socket_the_cli_survives(ws: Path) -> None:
    with_store(ws)
    path = ws / ".turnback" / "run" / "cli.sock"
    client = await config().start()
    try:
        await client.initialize_session(folder_params(ws))
        await wait_socket(ws)
        proc = client._server
        assert proc is not None
        proc.kill()
        await proc.wait()
    finally:
        await kill_and_stop(client)
    assert path.exists()  # stale: nothing listens
    found = handoff.request_for(["-C", str(ws), "status"])
    assert found is not None and await asyncio.to_thread(handoff.exchange, *found) is None
    out = cli(ws, "checkpoint")
    assert out.returncode == 0 and out.stdout.count(b"files,") == 1
    # a new server replaces the stale socket
    async with started(ws) as second:
        await second.wait_watching()
        await wait_socket(ws)
        assert (await handed(ws, "status"))[0] == 0


async def test_second_server_leaves_the_first_ones_socket(ws: Path) -> None:
    with_store(ws)
    async with started(ws) as first:
        await first.wait_watching()
        await wait_socket(ws)
        ino = os.lstat(ws / ".turnback" / "run" / "cli.sock").st_ino
        async with started(ws) as second:
            await second.wait_watching()
            await second.call("turnback/status", {})
            assert os.lstat(ws / ".turnback" / "run" / "cli.sock").st_ino == ino
            assert (await handed(ws, "status"))[0] == 0


async def test_declined_when_settings_change_the_store(ws: Path) -> None:
    with_store(ws)
    async with started(ws, options={"ignores": ["*.bin"]}) as client:
        await client.wait_watching()
        await wait_socket(ws)
        found = handoff.request_for(["-C", str(ws), "--json", "checkpoint"])
        assert found is not None
        assert await asyncio.to_thread(handoff.exchange, *found) is None
        # the CLI then works alone, with the store's own rules (data.bin kept)
        out = cli(ws, "--json", "checkpoint")
        assert out.returncode == 0 and json.loads(out.stdout)["files"] == 3


async def test_request_for_another_workspace_is_declined(ws: Path, tmp_path: Path) -> None:
    with_store(ws)
    other = tmp_path / "other"
    other.mkdir()
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        fields = [str(sockets.VERSION), "status", str(other), str(ws / ".turnback"), "0"]
        path = str(ws / ".turnback" / "run" / "cli.sock")
        assert await asyncio.to_thread(
            handoff.exchange, path, sockets.encode_request(fields)) is None
        # garbage fields: declined or ignored, and the server still serves
        for bad in ([b"\xff" * 10], [b"9", b"status"], [b"1", b"status", b"x"]):
            body = b"\0".join(bad)
            assert await asyncio.to_thread(
                handoff.exchange, path, len(body).to_bytes(4, "big") + body) is None
        assert (await handed(ws, "status"))[0] == 0
        assert picture(ws)  # the workspace is untouched and readable


async def test_an_agent_hook_is_handed_to_the_server(ws: Path) -> None:
    """`turnback hook` (what Claude Code's UserPromptSubmit runs) checkpoints through the
    server when one serves the store; a session the store lacks is left to the process."""
    from turnback.cli.common import Ctx
    from turnback.cli.hook_cmd import _handed_off

    with_store(ws)
    assert cli(ws, "session", "start", "--id", "s-hook", alone=True).returncode == 0
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        (ws / "README.md").write_text("edited by the agent\n")
        ctx = Ctx(workspace=str(ws), store_dir=None, as_json=False)
        assert await asyncio.to_thread(_handed_off, ctx, ws, "new turn: fix it", "s-hook")
        assert not await asyncio.to_thread(_handed_off, ctx, ws, "new turn: x", "s-unknown")
    listed = json.loads(cli(ws, "--json", "checkpoints", alone=True).stdout)["checkpoints"]
    mine = [c for c in listed if c["sessionId"] == "s-hook"]
    assert [c["label"] for c in mine] == ["new turn: fix it"]
    assert not [c for c in listed if c["sessionId"] == "s-unknown"]


async def test_the_editors_server_takes_over_from_a_background_one(ws: Path) -> None:
    """A background server (left by a hook's CLI) leaves when an editor's server opens the
    folder, which then serves the socket; an editor's server itself never leaves."""
    from turnback.store import background_lock

    with_store(ws)
    root = ws / ".turnback"
    path = str(root / "run" / "cli.sock")
    env = server_env(TURNBACK_BACKGROUND="1")
    subprocess.run([sys.executable, "-m", "turnback.cli.main", "-C", str(ws), "checkpoint"],
                   env=env, capture_output=True, timeout=120, check=True)
    pid = None
    try:
        for _ in range(6000):
            pid = background_lock.holder(root)
            if pid is not None and sockets.usable_socket(path) and sockets.answers(path):
                break
            await asyncio.sleep(0.01)
        assert pid is not None, "no background server started"
        async with started(ws) as client:
            await client.wait_watching()
            for _ in range(6000):
                # the background server lets its lock go as it exits: a socket that answers
                # after that is the editor's (not told by the socket file's inode, which the
                # file system hands out again: it waited the whole 60 s in 5 of 6 runs)
                if background_lock.holder(root) is None and sockets.answers(path):
                    break
                await asyncio.sleep(0.01)
            assert background_lock.holder(root) is None, "the background server stayed"
            assert "leaving: asked to leave" in (root / "run" / "background.log").read_text()
            code, out, _err = await handed(ws, "--json", "status")
            assert code == 0 and json.loads(out)["background"] is None
            leave = [str(sockets.VERSION), "leave", str(ws), str(root), "0"]
            assert await asyncio.to_thread(
                handoff.exchange, path, sockets.encode_request(leave)) is None  # declined
            assert (await handed(ws, "status"))[0] == 0  # and it still serves
    finally:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_silent_and_lying_clients_hold_no_write_queue(ws: Path) -> None:
    """Clients that connect and send nothing, half a frame, or a length of 1 GB: a
    checkpoint asked over JSON-RPC and one handed off meanwhile are answered, and the
    lying client is closed unread (checked sound by the rpcfuzz pass)."""
    with_store(ws)
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        path = str(ws / ".turnback" / "run" / "cli.sock")
        held: list[socket.socket] = []
        for _ in range(server_handoff.MAX_CLIENTS - 2):  # room left for the hand-off below
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            held.append(s)
        held[0].sendall(b"\x00\x00")  # half a length
        liar = socket.socket(socket.AF_UNIX)
        liar.connect(path)
        held.append(liar)
        liar.sendall((1 << 30).to_bytes(4, "big"))
        try:
            cp = await client.call("turnback/createCheckpoint", {"label": "while held"})
            assert cp["checkpoint"]["label"] == "while held"
            code, out, err = await handed(ws, "checkpoint", "-m", "handed while held")
            assert (code, err) == (0, b"") and b"handed while held" in out
            liar.settimeout(30)
            got = b""
            while chunk := await asyncio.to_thread(liar.recv, 4096):
                got += chunk  # the greeting, then the end: closed without reading 1 GB
            assert got == sockets.GREETING
        finally:
            for s in held:
                s.close()
        assert (await client.call("turnback/status", {}))["checkpoints"] == 2


async def test_a_client_that_stops_reading_frees_its_slot(ws: Path) -> None:
    """Clients that send a request and never read its answer (past the socket's buffer: a
    dry run of 2,000 files, ~300 KB as JSON) held their slot for as long as they stayed
    connected: with MAX_CLIENTS of them every hand-off was refused for the server's life.
    The server gives up on one that reads nothing for the client's own IDLE_TIMEOUT_S."""
    with_store(ws)
    for i in range(2000):
        (ws / f"{i:05}-{'n' * 120}.txt").write_text("x")
    assert cli(ws, "checkpoint", "-m", "many", alone=True).returncode == 0
    for i in range(2000):
        (ws / f"{i:05}-{'n' * 120}.txt").unlink()
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        path = str(ws / ".turnback" / "run" / "cli.sock")
        found = handoff.request_for(["-C", str(ws), "--json", "rewind", "latest", "--dry-run"])
        assert found is not None
        held: list[socket.socket] = []
        try:
            for _ in range(server_handoff.MAX_CLIENTS):
                s = socket.socket(socket.AF_UNIX)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(path)
                held.append(s)
                s.settimeout(30)
                assert s.recv(len(sockets.GREETING)) == sockets.GREETING  # a slot is taken
                s.sendall(found[1])
            deadline = time.monotonic() + sockets.IDLE_TIMEOUT_S * 3
            while await asyncio.to_thread(handoff.exchange, *found) is None:
                assert time.monotonic() < deadline, "every slot still held by non-readers"
                await asyncio.sleep(0.2)
        finally:
            for s in held:
                s.close()


@pytest.mark.parametrize("first", ["command", "hook"])
async def test_a_handed_off_command_tells_the_stores_notices_once(
        ws: Path, first: str, capfd: pytest.CaptureFixture[str]) -> None:
    """A CLI command or an agent's hook handed to a server said nothing of what the store
    set aside (a refused object log): only the server's ``window/showMessage`` did, which
    a background server sends to no one (trust21). The answer's stderr tells it once for
    the CLI, as the CLI working alone does; the hook prints it on stderr only."""
    from turnback.cli.common import Ctx
    from turnback.cli.hook_cmd import _handed_off
    from turnback.objects.packlog import LOG_MAGIC, encode

    with_store(ws)
    assert cli(ws, "checkpoint", alone=True).returncode == 0
    planted = "log-1-0123456789abcdef"
    (ws / ".turnback" / "objects" / "log" / planted).write_bytes(
        LOG_MAGIC + encode(8, [], b"", b"") * 50)  # frames with no object: refused
    async with started(ws) as client:
        await client.wait_watching()
        await wait_socket(ws)
        ctx = Ctx(workspace=str(ws), store_dir=None, as_json=False)
        capfd.readouterr()
        if first == "hook":
            assert await asyncio.to_thread(_handed_off, ctx, ws, "new turn", None)
            hook = capfd.readouterr()
            assert hook.out == "" and hook.err.count(planted) == 1, hook
        else:
            code, _out, err = await handed(ws, "checkpoint", "-m", "handed")
            assert code == 0 and err.decode().count(planted) == 1, err
        code, _out, err = await handed(ws, "checkpoint", "-m", "again")
        assert code == 0 and planted.encode() not in err, "told once"
        assert await asyncio.to_thread(_handed_off, ctx, ws, "end of turn", None)
        assert planted not in capfd.readouterr().err
    assert planted.encode() not in cli(ws, "status", alone=True).stderr, "once for the CLI"


class _CountingHost:
    """A host that runs each job at once on the store and counts the pool trips."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.trips: list[str] = []

    async def write(self, folder: Any, fn: Any, *, create: bool = False,
                    sessions: set[str] | None = None, checkpoints: bool = False,
                    after: Any = None) -> Any:
        self.trips.append("write")
        got = fn(self.store)
        if after is not None:
            after(self.store)
        return got

    async def read(self, folder: Any, fn: Any) -> Any:
        self.trips.append("read")
        return fn(self.store)


@pytest.mark.parametrize("verb", ["checkpoint", "rewind", "status"])
async def test_a_successful_hand_off_makes_one_pool_trip_notices_and_all(
        tmp_path: Path, verb: str) -> None:
    """The store's notices for the CLI (what its own open says first) come back with the
    command's own job: before, a second trip to the read pool asked for them after the
    command had answered. Told once all the same."""
    from turnback import Store
    from turnback.objects.packlog import LOG_MAGIC, encode
    from turnback.server.workspace.folders import Folder
    from turnback.server.workspace.settings import Settings

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    with Store.open(ws, create=True) as first:
        cp = first.checkpoint()
    planted = "log-1-0123456789abcdef"
    (ws / ".turnback" / "objects" / "log" / planted).write_bytes(
        LOG_MAGIC + encode(8, [], b"", b"") * 50)  # frames with no object: refused
    with Store.open(ws) as store:
        folder = Folder(ws.as_uri(), ws.resolve(), Settings())
        folder.store = store
        host = _CountingHost(store)
        listener = server_handoff.HandoffListener(host, folder, asyncio.get_running_loop())
        args = {"checkpoint": [], "rewind": ["arg", cp.id], "status": []}[verb]
        fields = [str(sockets.VERSION), verb, str(folder.path), str(store.root), "0", *args]
        answer = await listener._answer(fields)
        assert answer.startswith(sockets.ANSWER)
        header, rest = answer[len(sockets.ANSWER):].split(b"\n", 1)
        code, n_out, n_err = sockets.parse_answer_header(header) or (None, 0, 0)
        err = rest[n_out:n_out + n_err].decode()
        assert code == 0, rest
        assert host.trips == ["read" if verb == "status" else "write"]
        assert err.count(planted) == 1, err
        host.trips.clear()
        again = await listener._answer(fields)
        assert planted.encode() not in again, "told once"
