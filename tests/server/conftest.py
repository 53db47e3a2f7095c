"""The language server under test: a real ``python -m turnback.server`` process.

Each test gets a fresh workspace folder and a server started on it through
pytest-lsp. ``TurnbackClient`` adds what the tests need on top: plain-JSON
results, ``call``/``fails`` helpers, and a record of ``turnback/didChange``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from turnback.server.transport.wire import plain_json_converter

if TYPE_CHECKING:
    from turnback.server.core import TurnbackServer

REPO = Path(__file__).resolve().parents[2]
# faulthandler: a server killed for hanging prints every thread's stack first.
NO_HOME = REPO / "tests" / "no-such-home"  # never created
SERVER_CMD = [sys.executable, "-X", "faulthandler", "-m", "turnback.server"]


def real_xdg() -> dict[str, str]:
    """XDG_STATE_HOME and XDG_CACHE_HOME as they are without a changed HOME."""
    home = Path.home()
    return {"XDG_STATE_HOME": os.environ.get("XDG_STATE_HOME") or str(home / ".local" / "state"),
            "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME") or str(home / ".cache")}


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "server"), os.environ.get("PYTHONPATH", "")) if p
    )
    # Following agents is on by default: a server under test must not read the agents'
    # folders of whoever runs the tests. A home that does not exist holds no session.
    # The server's own state and cache (the rewind journal's key, the code cache) stay
    # where they always were.
    env.update(real_xdg())
    env["HOME"] = str(NO_HOME)
    env["TURNBACK_BACKGROUND"] = "0"  # no server left behind (tests/cli/test_background.py)
    env.update(extra)
    return env


CAPS = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
)


class TurnbackClient(LanguageClient):
    """A pytest-lsp client that keeps custom results as plain JSON."""

    def __init__(self) -> None:
        super().__init__(converter_factory=plain_json_converter)
        self.changes: list[tuple[float, dict[str, Any]]] = []
        self._changed = asyncio.Event()

    @classmethod
    def make(cls) -> TurnbackClient:
        client = cls()
        register_lsp_features(client)

        @client.feature("turnback/didChange")
        def on_change(params: Any) -> None:
            client.changes.append((time.monotonic(), params))
            client._changed.set()

        return client

    async def call(self, method: str, params: Any = None, timeout: float = 60.0) -> Any:
        try:
            return await asyncio.wait_for(
                self.protocol.send_request_async(method, params), timeout
            )
        except TimeoutError:
            if self._server is not None and self._server.returncode is None:
                os.kill(self._server.pid, signal.SIGUSR1)  # the server prints its threads
                await asyncio.sleep(1)
            raise AssertionError(f"{method} got no answer within {timeout}s") from None

    async def fails(self, method: str, params: Any, code: int, *words: str) -> str:
        """Assert the request fails with ``code`` and a message holding ``words``."""
        with pytest.raises(JsonRpcException) as info:
            await self.call(method, params)
        err = info.value
        assert err.code == code, f"{method} {params!r}: got {err.code} {err.message}"
        for w in words:
            assert w in err.message, f"{w!r} not in {err.message!r}"
        return err.message

    async def wait_change(
        self, pred: Callable[[dict[str, Any]], bool], timeout: float = 5.0, since: int = 0
    ) -> tuple[float, dict[str, Any]]:
        """The first didChange (from index ``since``) that satisfies ``pred``."""
        deadline = time.monotonic() + timeout
        while True:
            for t, params in self.changes[since:]:
                if pred(params):
                    return t, params
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching turnback/didChange; got {self.changes[since:]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                pass

    async def wait_watching(self, folder: str | None = None, timeout: float = 10.0) -> None:
        """Until the server's watcher of ``folder`` is up (so events are not missed)."""
        params = {"folder": folder} if folder else {}
        deadline = time.monotonic() + timeout
        while not (await self.call("turnback/status", params))["watching"]:
            if time.monotonic() > deadline:
                raise AssertionError("the server's watcher did not start")
            await asyncio.sleep(0.02)


def folder_params(*folders: Path, options: Any = None) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=CAPS,
        root_uri=folders[0].as_uri() if folders else None,
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
        initialization_options=options,
    )


def config(**env: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=SERVER_CMD, client_factory=TurnbackClient.make, server_env=server_env(**env)
    )


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# demo\n")
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "data.bin").write_bytes(bytes(range(256)) * 4)
    return root


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest_lsp.fixture(config=config())
async def client(lsp_client: TurnbackClient, ws: Path) -> AsyncIterator[None]:
    await lsp_client.initialize_session(folder_params(ws))
    await lsp_client.wait_watching()
    yield
    await stop_server(lsp_client)


async def stop_server(client: LanguageClient, timeout: float = 20.0) -> None:
    """shutdown + exit; a server that does not exit is made to dump its threads."""
    try:
        await asyncio.wait_for(client.shutdown_session(), timeout)
    except TimeoutError:
        proc = client._server
        if proc is not None and proc.returncode is None:
            os.kill(proc.pid, signal.SIGABRT)
            await asyncio.sleep(1)
        raise AssertionError(f"the server did not exit within {timeout}s of exit") from None


async def kill_and_stop(client: LanguageClient) -> None:
    """After a failed test the server was never told to exit: end it, then the client."""
    proc = client._server
    if proc is not None and proc.returncode is None:
        proc.kill()
    await client.stop()


@contextlib.asynccontextmanager
async def started(
    *folders: Path,
    options: Any = None,
    command: list[str] | None = None,
    before_init: Callable[[TurnbackClient], None] | None = None,
    **env: str,
) -> AsyncIterator[TurnbackClient]:
    """A server on ``folders`` (for tests that need their own set-up)."""
    cfg = config(**env)
    if command is not None:
        cfg.server_command = command
    client = await cfg.start()
    assert isinstance(client, TurnbackClient)
    try:
        if before_init is not None:
            before_init(client)
        await client.initialize_session(folder_params(*folders, options=options))
        yield client
        await stop_server(client)
    finally:
        await kill_and_stop(client)


def run_python(code: str, *args: str) -> str:
    """Run ``code`` in another Python process (another writer of the store)."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def run_cli(ws: Path, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "turnback.cli.main", "-C", str(ws), *args],
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


@pytest.fixture
def server() -> Iterator[TurnbackServer]:
    """The server's class in-process (no client, no process), its pools shut down after."""
    from turnback.server.core import TurnbackServer

    ls = TurnbackServer()
    try:
        yield ls
    finally:
        ls.pools.shutdown()


def plain_listing(items: list[Any]) -> list[Any]:
    """A session listing as plain JSON, to compare two."""
    return [s.to_json() for s in items]


def fresh_listing(ws: Path) -> list[Any]:
    """What another process lists now: the truth a kept listing must equal."""
    from turnback import Store

    other = Store.open(ws)
    try:
        return plain_listing(other.sessions()[0])
    finally:
        other.close()
