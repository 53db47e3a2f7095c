"""Every agent source, followed through the real watch: the follower's roots are watched
before any agent folder exists; each tool's session is then written where the tool
writes it, and changed; what the watch reports, polled, brings in every prompt."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.importers import Follower
from turnback.importers.agents.gemini import project_hash
from turnback.server.watching.agent_watch import AgentWatch

from . import agent_watching
from .agent_watching import Reported

backend = agent_watching.backend  # the fixture: each test with each watch backend

TS = "2026-01-01T00:00:0{}.000Z"


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value))
    tmp.replace(path)  # as the editors' extensions write: whole, then renamed
    return path


def prompts(store: Store, sid: str) -> list[str]:
    if not store.has_session(sid):
        return []
    return [e.data["text"] for e in store.session(sid).events if e.kind == "prompt"]


class Agents:
    """One session per source, written and grown where each tool keeps it."""

    def __init__(self, home: Path, ws: Path) -> None:
        self.home, self.ws = home, ws
        self.db: sqlite3.Connection | None = None
        storage = home / ".config" / "Code" / "User" / "workspaceStorage" / "h1"
        write(storage / "workspace.json", {"folder": ws.as_uri()})  # VS Code has it open
        self.chat = storage / "chatSessions" / "s-1.json"
        self.opencode = home / ".local" / "share" / "opencode" / "storage"

    def turn(self, n: int) -> None:
        """Write the sessions with prompts p0..pn of each source."""
        texts = [f"p{i}" for i in range(n + 1)]
        gemini = (self.home / ".gemini" / "tmp" / project_hash(self.ws) / "chats"
                  / "session-g.jsonl")
        gemini.parent.mkdir(parents=True, exist_ok=True)
        with gemini.open("a") as fh:
            if n == 0:
                fh.write(json.dumps({"sessionId": "g-1", "projectHash": "h",
                                     "startTime": TS.format(0), "kind": "main"}) + "\n")
            fh.write(json.dumps({"id": f"u{n}", "timestamp": TS.format(n), "type": "user",
                                 "content": texts[n]}) + "\n")
        task = (self.home / ".config" / "Code" / "User" / "globalStorage"
                / "saoudrizwan.claude-dev" / "tasks" / "t-1")
        cwd = json.dumps({"request": f"# Current Working Directory ({self.ws}) Files"})
        write(task / "ui_messages.json", [
            m for i, t in enumerate(texts) for m in (
                {"ts": 10 * i + 1, "type": "say", "say": "task" if i == 0 else "user_feedback",
                 "text": t},
                {"ts": 10 * i + 2, "type": "say", "say": "api_req_started", "text": cwd})])
        self._crush(n, texts[n])
        write(self.home / ".copilot" / "history-session-state" / "c.json", {
            "sessionId": "cli-1", "startTime": TS.format(0), "timeline": [
                {"id": "t0", "type": "tool_call_completed", "name": "view",
                 "arguments": {"path": str(self.ws)}},
                *({"id": f"u{i}", "type": "user", "text": t} for i, t in enumerate(texts))]})
        if n == 0:
            write(self.opencode / "session" / "prj" / "ses_1.json", {
                "id": "ses_1", "directory": str(self.ws), "time": {"created": 1767225600000}})
        write(self.opencode / "part" / f"msg_{n}" / "prt.json",
              {"id": f"prt_{n}", "messageID": f"msg_{n}", "type": "text", "text": texts[n]})
        write(self.opencode / "message" / "ses_1" / f"msg_{n}.json", {
            "id": f"msg_{n}", "sessionID": "ses_1", "role": "user",
            "time": {"created": 1767225600001 + n}})
        write(self.chat, {"version": 3, "sessionId": "s-1", "creationDate": 1767225600000,
                          "requests": [{"requestId": f"r{i}", "timestamp": 1767225601000 + i,
                                        "message": {"text": t}, "response": []}
                                       for i, t in enumerate(texts)]})
        write(self.home / ".continue" / "sessions" / "k-1.json", {
            "sessionId": "k-1", "workspaceDirectory": str(self.ws),
            "history": [{"message": {"role": "user", "content": t}, "contextItems": []}
                        for t in texts]})

    def _crush(self, n: int, text: str) -> None:
        if self.db is None:
            db = self.ws / ".crush" / "crush.db"
            db.parent.mkdir()
            self.db = sqlite3.connect(db)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA wal_autocheckpoint=0")
            self.db.executescript(
                "CREATE TABLE sessions (id TEXT, parent_session_id TEXT, title TEXT,"
                " created_at INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER);"
                "CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT, parts TEXT,"
                " model TEXT, created_at INTEGER, finished_at INTEGER);"
                "CREATE TABLE files (id TEXT, session_id TEXT, path TEXT, content TEXT,"
                " version INTEGER, created_at INTEGER);"
                "INSERT INTO sessions VALUES ('cr-1', NULL, 'x', 1, 0, 0);")
        self.db.execute("INSERT INTO messages VALUES (?, 'cr-1', 'user', ?, 'm', ?, NULL)",
                        (f"m{n}", json.dumps([{"type": "text", "data": {"text": text}}]), n + 1))
        self.db.commit()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()


SESSIONS = {"gemini-cli": "g-1", "cline": "t-1", "crush": "cr-1", "copilot-cli": "cli-1",
            "opencode": "ses_1", "copilot-chat": "s-1", "continue": "k-1"}


@pytest.fixture
def agents(tmp_path: Path, store: Store) -> Iterator[Agents]:
    a = Agents(tmp_path / "home", store.workspace)
    yield a
    a.close()


def follow_until(follower: Follower, seen: Reported, done: Callable[[], bool],
                 timeout: float = 30.0) -> set[str]:
    """Poll what the watch reports until ``done``; the sessions reported prompted."""
    deadline = time.monotonic() + timeout
    prompted: set[str] = set()
    while not done():
        assert time.monotonic() < deadline, \
            f"the watch did not bring every change in: {follower.followed()}"
        prompted.update(follower.poll(seen.take(deadline)).prompted)
    return prompted


def test_every_source_followed_through_the_watch(backend: str, store: Store, agents: Agents,
                                                 tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = Follower(store, home=home, env={})
    seen = Reported()
    watch = AgentWatch([r for _, r in follower.roots()], seen, limit=home)
    watch.start()
    try:
        assert watch.ready.wait(10)
        assert follower.poll().sessions == []  # no agent folder exists yet
        for n in range(2):
            agents.turn(n)  # the first turn makes every folder after following began
            want = [f"p{i}" for i in range(n + 1)]

            def done(want: list[str] = want) -> bool:
                return all(prompts(store, sid) == want for sid in SESSIONS.values())

            prompted = follow_until(follower, seen, done)
            assert prompted == set(SESSIONS.values())
            assert {follower.agent_of(s) for s in SESSIONS.values()} == set(SESSIONS)
    finally:
        watch.stop()
