"""The language server's framing (branch rpc21): memory under a lying length, CPU per message.

``huge``: ``Content-Length: 10^12`` then ``--mb`` MB of body streamed into the server's stdin;
the server's resident memory (``VmRSS``, ``VmHWM``) before and after, and whether an answer
came for the header. ``rate``: ``--count`` notifications (``$/rpc21``, which no one handles)
then one request; the server's CPU time (user + system, all threads) for them.
``fileline``: stdin a regular file holding one ``--mb`` MB line (sparse zeros), then a frame
that is not JSON; the server's peak memory (``ru_maxrss``) once the file's end has ended it.

    .venv/bin/python bench/probes/server/rpc21_frames.py huge --mb 1024 [--src OTHER/server]
    .venv/bin/python bench/probes/server/rpc21_frames.py rate --count 20000 [--src OTHER/server]
    .venv/bin/python bench/probes/server/rpc21_frames.py fileline --mb 512 [--src OTHER/server]

``--src`` runs the server of another tree (``git archive REF server | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def frame(obj: object) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def read_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise KeyError("rchar")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, src: Path, cwd: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
        env.update(PYTHONPATH=str(src), HOME=cwd, TURNBACK_BACKGROUND="0")
        self.proc = subprocess.Popen([sys.executable, "-m", "turnback.server"], cwd=cwd,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.got: list[dict[str, object]] = []
        self.event = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while line := out.readline():
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
                while out.readline() not in (b"\r\n", b""):
                    pass
                self.got.append(json.loads(out.read(n)))
                self.event.set()

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait_for(self, pred: object, timeout: float = 120.0) -> dict[str, object] | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for msg in self.got:
                if pred(msg):  # type: ignore[operator]
                    return msg
            self.event.clear()
            self.event.wait(0.5)
        return None

    def end(self) -> None:
        self.proc.kill()
        self.proc.wait()


def huge(server: Server, mb: int) -> dict[str, object]:
    server.send(frame({"jsonrpc": "2.0", "id": 1, "method": "turnback/status", "params": {}}))
    assert server.wait_for(lambda m: m.get("id") == 1), "no answer to the first request"
    pid = server.proc.pid
    before = {"rss_kb": status(pid, "VmRSS"), "hwm_kb": status(pid, "VmHWM")}
    start_read = read_bytes(pid)
    server.send(b"Content-Length: 1000000000000\r\n\r\n")
    chunk = b"x" * (1 << 20)
    t0 = time.monotonic()
    for _ in range(mb):
        server.send(chunk)
    while read_bytes(pid) - start_read < mb * (1 << 20) - (1 << 16):  # the pipe's buffer
        if time.monotonic() - t0 > 600:
            break
        time.sleep(0.05)
    answered = server.wait_for(lambda m: m.get("id", 0) is None, timeout=1.0)
    return {"before": before,
            "after": {"rss_kb": status(pid, "VmRSS"), "hwm_kb": status(pid, "VmHWM")},
            "streamed_mb": mb, "seconds": round(time.monotonic() - t0, 1),
            "answer_to_the_header": answered}


def rate(server: Server, count: int) -> dict[str, object]:
    server.send(frame({"jsonrpc": "2.0", "id": 1, "method": "turnback/status", "params": {}}))
    assert server.wait_for(lambda m: m.get("id") == 1), "no answer to the first request"
    pid = server.proc.pid
    note = frame({"jsonrpc": "2.0", "method": "$/rpc21", "params": {"n": 1, "s": "x" * 100}})
    c0, t0 = cpu_s(pid), time.monotonic()
    server.send(note * count)
    server.send(frame({"jsonrpc": "2.0", "id": 2, "method": "turnback/status", "params": {}}))
    assert server.wait_for(lambda m: m.get("id") == 2), "no answer to the last request"
    cpu = cpu_s(pid) - c0
    return {"messages": count + 1, "server_cpu_s": round(cpu, 3),
            "cpu_us_per_message": round(cpu / (count + 1) * 1e6, 1),
            "wall_s": round(time.monotonic() - t0, 2)}


def fileline(src: Path, cwd: str, mb: int) -> dict[str, object]:
    path = Path(cwd) / "stdin"
    with path.open("wb") as f:
        f.truncate(mb << 20)
        f.seek(mb << 20)
        f.write(b"\r\n" + b"Content-Length: 8\r\n\r\nnot json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
    env.update(PYTHONPATH=str(src), HOME=cwd, TURNBACK_BACKGROUND="0")
    with path.open("rb") as stdin:
        proc = subprocess.Popen([sys.executable, "-m", "turnback.server"], cwd=cwd, env=env,
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = proc.stdout.read() if proc.stdout is not None else b""
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
    return {"line_mb": mb, "peak_kb": usage.ru_maxrss, "answered_32700": b"-32700" in out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["huge", "rate", "fileline"])
    ap.add_argument("--src", type=Path, default=REPO / "server")
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--dir", type=Path, default=None, help="where the server's scratch folder goes")
    args = ap.parse_args()
    load = Path("/proc/loadavg").read_text().split()[0]
    with tempfile.TemporaryDirectory(prefix="rpc21-", dir=args.dir) as cwd:
        if args.what == "fileline":
            result = fileline(args.src.resolve(), cwd, args.mb)
            print(json.dumps({"src": str(args.src), "load_before": load, **result}))
            return
        server = Server(args.src.resolve(), cwd)
        try:
            result = huge(server, args.mb) if args.what == "huge" else rate(server, args.count)
        finally:
            server.end()
    print(json.dumps({"src": str(args.src), "load_before": load,
                      "load_after": Path("/proc/loadavg").read_text().split()[0], **result}))


if __name__ == "__main__":
    main()
