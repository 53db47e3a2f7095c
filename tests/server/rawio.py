"""A server process driven byte by byte over stdio, for the framing's tests.

pytest-lsp's client frames every message right and drops answers whose ``id`` is null;
these tests send what no client library would and read every frame that comes back.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from .conftest import SERVER_CMD, server_env


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: int, method: str = "turnback/status", params: Any = None) -> bytes:
    return frame(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                             "params": params or {}}).encode())


class RawServer:
    """``python -m turnback.server`` with its stdout parsed into messages on a thread."""

    def __init__(self, cwd: Path, stdin: int | IO[bytes] | None = subprocess.PIPE,
                 cmd: list[str] | None = None) -> None:
        self.stderr_path = cwd / "server.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(cmd or SERVER_CMD, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=server_env(), cwd=cwd)
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            line = out.readline()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
                while out.readline() not in (b"\r\n", b""):
                    pass
                self.messages.put(json.loads(out.read(n)))
        self.messages.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def expect(self, timeout: float = 20.0, **fields: Any) -> dict[str, Any]:
        """The first message (from now on) whose top-level fields are ``fields``, with an
        error's ``code`` as ``code``; an AssertionError naming what came, if none did."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                msg = self.messages.get(timeout=max(left, 0.001))
            except queue.Empty:
                raise AssertionError(f"no message with {fields} in {timeout}s; "
                                     f"got {self.seen[-5:]}") from None
            if msg is None:
                raise AssertionError(f"stdout ended; got {self.seen[-5:]}; stderr "
                                     f"{self.stderr()[-2000:]}")
            self.seen.append(msg)
            got = dict(msg, code=msg.get("error", {}).get("code"))
            if all(k in got and got[k] == v for k, v in fields.items()):
                return msg

    def answers(self, msg_id: int) -> None:
        """A request sent now is answered (a status before ``initialize``: -32001)."""
        self.send(request(msg_id))
        self.expect(id=msg_id)
        assert self.proc.poll() is None

    def peak_kb(self) -> int:
        """The process's peak resident memory so far (``VmHWM``), kB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(ln for ln in status.splitlines() if ln.startswith("VmHWM:")).split()[1])

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> None:
        """``shutdown``, ``exit``; killed if still there after 20 s."""
        try:
            if self.proc.stdin is not None:
                if self.proc.poll() is None:
                    self.send(request(10**6, "shutdown"))
                    self.send(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
                self.proc.stdin.close()
            self.proc.wait(20)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._stderr.close()
