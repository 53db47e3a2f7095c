"""A small JSON-RPC (LSP framing) client for timing the Turnback server over stdio.

Synchronous on purpose: the benchmark times one request at a time, and a reader
thread that hands each response to the waiting caller costs microseconds. The
client answers the server's own requests (``client/registerCapability``,
``window/workDoneProgress/create``, ``workspace/configuration``) with ``null`` so
the server never blocks on it, and keeps the notifications it receives.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any


class RpcError(Exception):
    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.error = error


class LspClient:
    """Start ``cmd`` and speak JSON-RPC with Content-Length framing on its stdio."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
                 answer_delay: float = 0.0) -> None:
        """``answer_delay``: seconds before the server's own requests are answered (an
        editor's extension host busy starting up), on a timer, not the reader."""
        self.started = time.perf_counter()
        self.answer_delay = answer_delay
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if os.environ.get("BENCH_QUIET_SERVER") else None,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._out: IO[bytes] = self.proc.stdin
        self._pending: dict[int, Future[Any]] = {}
        self._methods: dict[int, str] = {}
        self._next = 0
        self._lock = threading.Lock()
        self.notifications: list[tuple[float, str, Any]] = []
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    # -- wire -------------------------------------------------------------------------------
    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode()
        with self._lock:
            self._out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._out.flush()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = -1
            while True:
                line = stream.readline()
                if not line:
                    self._fail_all("the server closed its stdout")
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            if length < 0:
                continue
            msg = json.loads(stream.read(length))
            self._dispatch(msg)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "method" in msg:
            if "id" in msg:  # a request from the server: answer so it does not wait
                answer = {"jsonrpc": "2.0", "id": msg["id"], "result": None}
                if self.answer_delay > 0:
                    threading.Timer(self.answer_delay, self._send, (answer,)).start()
                else:
                    self._send(answer)
            else:
                self.notifications.append((time.perf_counter(), msg["method"], msg.get("params")))
            return
        fut = self._pending.pop(msg.get("id", -1), None)
        if fut is None:
            return
        if "error" in msg:
            fut.set_exception(RpcError(self._methods.pop(msg["id"], "?"), msg["error"]))
        else:
            self._methods.pop(msg["id"], None)
            fut.set_result(msg.get("result"))

    def _fail_all(self, why: str) -> None:
        for i, fut in list(self._pending.items()):
            fut.set_exception(RuntimeError(f"{self._methods.get(i, '?')}: {why}"))
        self._pending.clear()

    # -- API --------------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, timeout: float = 600.0) -> Any:
        with self._lock:
            self._next += 1
            rid = self._next
        fut: Future[Any] = Future()
        self._pending[rid] = fut
        self._methods[rid] = method
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return fut.result(timeout=timeout)

    def timed(self, method: str, params: Any = None) -> tuple[float, Any]:
        t0 = time.perf_counter()
        result = self.request(method, params)
        return time.perf_counter() - t0, result

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, folder: Path, capabilities: dict[str, Any] | None = None) -> Any:
        uri = folder.resolve().as_uri()
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "capabilities": capabilities or {},
                "workspaceFolders": [{"uri": uri, "name": folder.name}],
            },
        )
        self.notify("initialized", {})
        return result

    def close(self, timeout: float = 10.0) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit")
                self.proc.wait(timeout=timeout)
        except Exception:  # a server that does not shut down cleanly is killed: it is ours
            self.proc.kill()
            self.proc.wait()
