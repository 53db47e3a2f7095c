"""Capture one real request/response per method for docs/PROTOCOL.md.

Runs ``python -m turnback.server`` on a small demo workspace, drives every
method (and a few errors) the way a client would, and either prints the
exchanges as JSON or, with ``--write``, replaces the example blocks of
docs/PROTOCOL.md (between ``<!-- example: NAME -->`` and ``<!-- /example -->``).

    .venv/bin/python tests/server/protocol_examples.py --write
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: tests/ holds shared_data
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from shared_data import need_transcripts

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "PROTOCOL.md"


class Client:
    """Just enough JSON-RPC over stdio (LSP framing) to record exchanges."""

    def __init__(self, cwd: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "server"),
                                                        env.get("PYTHONPATH", "")) if p)
        env.pop("TURNBACK_STORE", None)
        env["XDG_STATE_HOME"] = os.environ.get("XDG_STATE_HOME") or str(
            Path.home() / ".local" / "state")  # the server's own state and cache stay put ...
        env["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        env["HOME"] = str(REPO / "tests" / "no-such-home")  # ... and no agent's session is read
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "turnback.server"], cwd=cwd, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.responses: dict[int, Any] = {}
        self.notifications: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline().strip()) != b"":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                return
            msg = json.loads(out.read(length))
            with self.cond:
                if "method" in msg and "id" in msg:  # a request from the server
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                elif "method" in msg:
                    self.notifications.append(msg)
                else:
                    self.responses[msg["id"]] = msg
                self.cond.notify_all()

    def request(self, method: str, params: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        self.next_id += 1
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self._send(req)
        with self.cond:
            self.cond.wait_for(lambda: req["id"] in self.responses, 60)
            return req, self.responses.pop(req["id"])

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_notification(self, method: str, since: int, session: str) -> dict[str, Any]:
        def match(n: dict[str, Any]) -> bool:
            return n["method"] == method and session in n["params"]["sessions"]

        with self.cond:
            self.cond.wait_for(lambda: any(match(n) for n in self.notifications[since:]), 10)
            return next(n for n in self.notifications[since:] if match(n))

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(10)


def record(ws: Path) -> dict[str, list[dict[str, Any]]]:
    """Every exchange, by example name."""
    ex: dict[str, list[dict[str, Any]]] = {}
    c = Client(ws)
    ex["initialize"] = list(c.request("initialize", {
        "processId": os.getpid(),
        "rootUri": ws.as_uri(),
        "workspaceFolders": [{"uri": ws.as_uri(), "name": ws.name}],
        "capabilities": {"window": {"workDoneProgress": True}},
        "initializationOptions": {"turnback": {"autoCheckpoint": True}},
    }))
    c.notify("initialized", {})
    deadline = time.monotonic() + 10
    while not c.request("turnback/status", {})[1]["result"]["watching"]:
        assert time.monotonic() < deadline
        time.sleep(0.02)

    def call(name: str, method: str, params: Any) -> dict[str, Any]:
        req, resp = c.request(method, params)
        ex.setdefault(name, []).extend([req, resp])
        return resp

    call("turnback/status", "turnback/status", {})
    cp1 = call("turnback/createCheckpoint", "turnback/createCheckpoint",
               {"label": "before the agent"})["result"]["checkpoint"]
    call("error: conflict", "turnback/undo", {})

    # An agent in another process records its turn and edits the workspace.
    time.sleep(0.5)  # let the notifications of the server's own checkpoint go by
    since = len(c.notifications)
    sid = "20261122T101500-a1b2c3"
    script = (
        "import sys\nfrom turnback import Store, Kind\n"
        "s, sid = Store.open(sys.argv[1]), sys.argv[2]\n"
        "s.start_session(title='Make the greeting friendlier', agent='claude-code',"
        " model='opus', session_id=sid)\n"
        "p = s.append(sid, Kind.PROMPT, {'text': 'Make the greeting friendlier'})\n"
        "s.append(sid, Kind.TOOL_CALL, {'name': 'Edit', 'input': "
        "{'file_path': 'src/app.py'}, 'toolUseId': 'toolu_01'})\n"
        "s.append(sid, Kind.TOOL_RESULT, {'toolUseId': 'toolu_01',"
        " 'isError': False, 'output': 'ok'})\n"
        "s.append(sid, Kind.RESPONSE, {'text': 'Done: it now says hi.'})\n"
        "print(p.id)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO / "server"))
    prompt_id = subprocess.run([sys.executable, "-c", script, str(ws), sid], env=env, check=True,
                               capture_output=True, text=True).stdout.strip()
    (ws / "src" / "app.py").write_text("print('hi there')\n")
    (ws / "notes.md").write_text("# notes\n")
    ex["turnback/didChange"] = [c.wait_notification("turnback/didChange", since, sid)]

    call("turnback/sessions", "turnback/sessions", {"limit": 10})
    call("turnback/session", "turnback/session", {"sessionId": sid, "limit": 2})
    cp2 = call("turnback/createCheckpoint: in a session", "turnback/createCheckpoint",
               {"sessionId": sid, "label": "after the agent"})["result"]["checkpoint"]
    call("turnback/checkpoints", "turnback/checkpoints", {"sessionId": sid})
    call("turnback/changes", "turnback/changes", {"from": cp1["id"], "to": cp2["id"]})
    call("turnback/fileContent", "turnback/fileContent",
         {"checkpoint": cp1["id"], "path": "src/app.py"})
    call("turnback/turns", "turnback/turns", {"sessionId": sid, "limit": 1})
    call("turnback/turnSteps", "turnback/turnSteps", {"sessionId": sid, "turnId": prompt_id})
    call("turnback/fileHistory", "turnback/fileHistory", {"path": "src/app.py", "limit": 1})
    call("turnback/importCandidates", "turnback/importCandidates", {})
    call("turnback/continue", "turnback/continue",
         {"sessionId": sid, "turnId": prompt_id, "dryRun": True})
    call("turnback/rewind: dry run", "turnback/rewind", {"checkpoint": cp1["id"], "dryRun": True})
    call("turnback/rewind", "turnback/rewind", {"checkpoint": cp1["id"]})
    call("turnback/undo", "turnback/undo", {})
    call("turnback/fork", "turnback/fork", {"eventId": prompt_id})
    call("turnback/import", "turnback/import", {"source": "ralph"})
    call("turnback/gc", "turnback/gc", {"dryRun": True})
    call("turnback/hooks", "turnback/hooks", {"action": "install", "agent": "claude-code"})
    remote = ws.parent / "history.git"  # a team's remote, here a bare repository beside it
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    call("turnback/pushHistory", "turnback/pushHistory", {"remote": str(remote), "dryRun": True})
    call("turnback/pushHistory: forget a session", "turnback/pushHistory",
         {"remote": str(remote), "forget": [sid]})
    call("turnback/pullHistory", "turnback/pullHistory", {"remote": str(remote)})
    call("error: invalid params", "turnback/rewind", {"checkpoint": cp1["id"], "mode": "all"})
    call("error: not found", "turnback/session", {"sessionId": "20250101T000000-ffffff"})
    call("error: unsafe", "turnback/fileContent",
         {"checkpoint": cp1["id"], "path": "../.ssh/id_rsa"})
    call("turnback/blame", "turnback/blame", {"path": "src/app.py"})
    c.close()
    return ex


def make_demo(root: Path) -> Path:
    ws = root / "greeter"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hello')\n")
    (ws / "README.md").write_text("# greeter\n")
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(64)))
    (ws / ".ralph").mkdir()
    shutil.copy(need_transcripts() / "ralph" / "mikeyobrien+rho" / "history.jsonl",
                ws / ".ralph" / "history.jsonl")
    return ws


def shorten(value: Any, depth: int = 0) -> Any:
    """Long arrays and texts cut for reading (marked, so nothing looks invented)."""
    if isinstance(value, list):
        items = [shorten(v, depth + 1) for v in value[:3]]
        return items + ([f"… {len(value) - 3} more"] if len(value) > 3 else [])
    if isinstance(value, dict):
        return {k: shorten(v, depth + 1) for k, v in value.items()}
    if isinstance(value, str) and len(value) > 160:
        return value[:157] + "…"
    return value


def render(msgs: list[dict[str, Any]]) -> str:
    parts = []
    for m in msgs:
        arrow = "→" if "method" in m and "id" in m else ("←" if "id" in m else "⇐")
        parts.append(f"{arrow} {json.dumps(shorten(m), indent=2, ensure_ascii=False)}")
    return "```jsonc\n" + "\n".join(parts) + "\n```"


def write_doc(examples: dict[str, list[dict[str, Any]]]) -> None:
    text = DOC.read_text()
    pattern = re.compile(r"(<!-- example: (.+?) -->\n).*?(<!-- /example -->)", re.S)

    def sub(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in examples:
            raise SystemExit(f"PROTOCOL.md asks for example {name!r}, which was not recorded")
        return m.group(1) + render(examples[name]) + "\n" + m.group(3)

    DOC.write_text(pattern.sub(sub, text))


def main() -> None:
    # A fixed place, so that regenerated examples differ only where the data does.
    root = Path(tempfile.gettempdir()) / "turnback-protocol-demo"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    try:
        examples = record(make_demo(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if "--write" in sys.argv:
        write_doc(examples)
    else:
        print(json.dumps(examples, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
