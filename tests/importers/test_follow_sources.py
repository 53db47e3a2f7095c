"""Every agent source is followed live: a session written where the tool writes it
(a fake home and editor storage) is imported, and a change to it — or a new session
or folder made after following began — is read when the watch names the changed path.

The paths handed to ``poll`` are the ones the tool's write changes; each test checks
first that a watch root of the source holds it (so ``AgentWatch`` reports it; the
server's test drives the real watch).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.importers import Follower
from turnback.importers.agents.gemini import project_hash
from turnback.importers.result import ImportResult

from .test_documented_formats import continue_session, copilot_chat, opencode_storage, write

TS = "2026-01-01T00:00:0{}.000Z"


def follower(store: Store, source: str, home: Path) -> Follower:
    return Follower(store, sources=[source], home=home, env={})


def changed(f: Follower, *paths: Path) -> ImportResult:
    """Poll as the watch would after ``paths`` changed (each must be under a root)."""
    roots = [r for _, r in f.roots()]
    for p in paths:
        assert any(r.holds(p) for r in roots), f"no watch root holds {p}"
    return f.poll(list(paths))


def prompts(store: Store, sid: str) -> list[str]:
    return [e.data["text"] for e in store.session(sid).events if e.kind == "prompt"]


# -- Gemini CLI and Qwen Code ------------------------------------------------------------------
def gemini_line(**obj: Any) -> str:
    return json.dumps(obj) + "\n"


def test_gemini_cli_jsonl_chat_is_followed(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    f = follower(store, "gemini-cli", home)
    assert f.poll().sessions == []  # nothing yet: not even the project folder
    chats = home / ".gemini" / "tmp" / project_hash(store.workspace) / "chats"
    chats.mkdir(parents=True)  # the folder appears after following began
    chat = chats / "session-2026-01-01T00-00-g1.jsonl"
    chat.write_text(gemini_line(sessionId="g-1", projectHash="h", startTime=TS.format(0),
                                lastUpdated=TS.format(0), kind="main")
                    + gemini_line(id="u1", timestamp=TS.format(1), type="user",
                                  content=[{"text": "fix a.py"}]))
    first = changed(f, chats)  # the watch reports the new folder: the source looks
    assert first.sessions == ["g-1"] and first.prompted == ["g-1"]
    with chat.open("a") as fh:
        fh.write(gemini_line(id="m1", timestamp=TS.format(2), type="gemini", content="done"))
        fh.write(gemini_line(id="u2", timestamp=TS.format(3), type="user", content="and b.py"))
    again = changed(f, chat)
    assert (again.events, again.prompted) == (2, ["g-1"])
    assert prompts(store, "g-1") == ["fix a.py", "and b.py"]
    assert changed(f, chat).events == 0  # unchanged: not read again


def test_qwen_code_json_chat_rewritten_whole_is_followed(store: Store, ws: Path,
                                                         tmp_path: Path) -> None:
    home = tmp_path / "home"
    chats = home / ".qwen" / "tmp" / project_hash(store.workspace) / "chats"

    def chat(*texts: str) -> Path:
        messages = [{"id": f"u{i}", "timestamp": TS.format(i), "type": "user", "content": t}
                    for i, t in enumerate(texts)]
        return write(chats / "session-q1.json", {
            "sessionId": "q-1", "projectHash": "h", "startTime": TS.format(0),
            "lastUpdated": TS.format(0), "messages": messages})

    path = chat("one")
    f = follower(store, "qwen-code", home)
    assert f.poll().sessions == ["q-1"]
    path = chat("one", "two")  # Qwen Code (like older Gemini CLI) rewrites the file
    assert changed(f, path).prompted == ["q-1"]
    assert prompts(store, "q-1") == ["one", "two"]


# -- Cline, Roo Code, Kilo Code ----------------------------------------------------------------
def task_messages(ws: Path, *texts: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, text in enumerate(texts):
        out.append({"ts": 10 * i + 1, "type": "say", "say": "task" if i == 0 else "user_feedback",
                    "text": text})
        out.append({"ts": 10 * i + 2, "type": "say", "say": "api_req_started",
                    "text": json.dumps({"request": f"# Current Working Directory ({ws}) Files"})})
        out.append({"ts": 10 * i + 3, "type": "say", "say": "text", "text": f"did {text}"})
    return out


def test_cline_family_task_folders_are_followed(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".config"
    for source, ext in (("cline", "saoudrizwan.claude-dev"),
                        ("roo-code", "rooveterinaryinc.roo-cline"),
                        ("kilo-code", "kilocode.kilo-code")):
        tasks = config / "Code" / "User" / "globalStorage" / ext / "tasks"
        old = tasks / f"{source}-1"
        write(old / "ui_messages.json", task_messages(store.workspace, "one"))
        write(old / "api_conversation_history.json", [])
        write(old / "task_metadata.json", {"files_in_context": []})
        f = follower(store, source, home)
        first = f.poll()
        assert first.sessions == [f"{source}-1"] and first.prompted == []
        # Cline rewrites ui_messages.json as the task goes on: that re-imports the task
        ui = write(old / "ui_messages.json", task_messages(store.workspace, "one", "two"))
        again = changed(f, ui)
        assert (again.prompted, again.events) == ([f"{source}-1"], 2)  # prompt, answer
        assert prompts(store, f"{source}-1") == ["one", "two"]
        # the other two files of the trio do not make the task be read again
        write(old / "task_metadata.json", {"files_in_context": [{"path": "a.py"}]})
        assert f.poll([old / "task_metadata.json"]).events == 0
        # a new task: its folder appears, then its messages
        new = tasks / f"{source}-2"
        new.mkdir()
        assert changed(f, new).sessions == []  # nothing in it yet
        ui2 = write(new / "ui_messages.json", task_messages(store.workspace, "three"))
        assert changed(f, ui2).prompted == [f"{source}-2"]
        # a task of another folder is not this workspace's
        other = write(tasks / "elsewhere" / "ui_messages.json",
                      task_messages(tmp_path / "other", "x"))
        assert changed(f, other).sessions == []
        # a linked task folder is never read (the store is input from anyone who writes ~)
        hidden = write(tmp_path / "hidden" / source / "ui_messages.json",
                       task_messages(store.workspace, "secret"))
        (tasks / "linked").symlink_to(hidden.parent, target_is_directory=True)
        assert changed(f, tasks / "linked" / "ui_messages.json").sessions == []
        assert not store.has_session("linked")


# -- Crush and OpenCode (Go): SQLite in WAL mode ------------------------------------------------
CRUSH_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT,
    message_count INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL,
    updated_at INTEGER, created_at INTEGER);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT,
    model TEXT, created_at INTEGER, updated_at INTEGER, finished_at INTEGER);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT, path TEXT, content TEXT,
    version INTEGER, created_at INTEGER, updated_at INTEGER);
"""


def add_message(conn: sqlite3.Connection, sid: str, mid: str, role: str, text: str,
                at: int) -> None:
    parts = [{"type": "text", "data": {"text": text}}]
    if role == "assistant":
        parts.append({"type": "finish", "data": {"reason": "end_turn"}})
    conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, 'm', ?, ?, ?)",
                 (mid, sid, role, json.dumps(parts), at, at, at if role == "assistant" else None))
    conn.commit()


def test_sqlite_sources_are_followed_through_their_wal(store: Store, ws: Path,
                                                       tmp_path: Path) -> None:
    for source, folder, name in (("crush", ".crush", "crush.db"),
                                 ("opencode-go", ".opencode", "opencode.db")):
        db = store.workspace / folder / name
        f = follower(store, source, tmp_path / "home")
        assert f.poll().sessions == []
        db.parent.mkdir()  # the tool makes its folder and database after following began
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")  # what it writes stays in the -wal
            conn.executescript(CRUSH_SCHEMA)
            conn.execute("INSERT INTO sessions VALUES (?, NULL, 'Fix', 2, 0, 0, 0, 1, 1)",
                         (source,))
            add_message(conn, source, "m1", "user", "fix a.py", 1)
            assert changed(f, db).sessions == [source]
            assert prompts(store, source) == ["fix a.py"]
            wal = db.with_name(name + "-wal")
            size = db.stat().st_size
            add_message(conn, source, "m2", "assistant", "done", 2)
            add_message(conn, source, "m3", "user", "now b.py", 3)
            assert db.stat().st_size == size and wal.stat().st_size > 0  # only the -wal grew
            again = changed(f, wal)
            assert (again.prompted, again.events) == ([source], 2)
            assert prompts(store, source) == ["fix a.py", "now b.py"]
            assert changed(f, wal).events == 0  # unchanged: not read again
        finally:
            conn.close()


# -- GitHub Copilot CLI --------------------------------------------------------------------------
def test_copilot_cli_sessions_are_followed(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".copilot" / "history-session-state"

    def session(*texts: str) -> Path:
        timeline: list[dict[str, Any]] = [
            {"id": "t0", "timestamp": TS.format(0), "type": "tool_call_completed",
             "name": "view", "arguments": {"path": str(store.workspace / "a.py")}}]
        timeline += [{"id": f"u{i}", "timestamp": TS.format(i + 1), "type": "user", "text": t}
                     for i, t in enumerate(texts)]
        return write(folder / "session_c1.json", {"sessionId": "c-1", "startTime": TS.format(0),
                                                   "timeline": timeline})

    f = follower(store, "copilot-cli", home)
    assert f.poll().sessions == []
    path = session("look at a.py")  # its folder appears after following began
    assert changed(f, path).prompted == ["c-1"]
    path = session("look at a.py", "and fix it")
    assert changed(f, path).prompted == ["c-1"]
    assert prompts(store, "c-1") == ["look at a.py", "and fix it"]


# -- OpenCode (TypeScript) -----------------------------------------------------------------------
def test_opencode_session_is_read_again_when_its_messages_change(
    store: Store, ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    session = opencode_storage(home, store.workspace)
    storage = session.parents[2]
    f = follower(store, "opencode", home)
    first = f.poll()
    assert first.sessions == ["ses_1"] and first.prompted == []
    # a new prompt: OpenCode writes its part, then the message (the session file stays)
    write(storage / "part" / "msg_03" / "prt_10.json",
          {"id": "prt_10", "messageID": "msg_03", "type": "text", "text": "now run it"})
    message = write(storage / "message" / "ses_1" / "msg_03.json", {
        "id": "msg_03", "sessionID": "ses_1", "role": "user", "time": {"created": 1767225700000}})
    again = changed(f, message)
    assert (again.prompted, again.events) == (["ses_1"], 1)
    assert prompts(store, "ses_1") == ["add a test for a.py", "now run it"]
    # another workspace's session's messages are not read
    other = write(storage / "message" / "ses_2" / "msg_09.json",
                  {"id": "msg_09", "sessionID": "ses_2", "role": "user"})
    assert changed(f, other).sessions == []
    # a new session of this workspace, in a project folder made after following began
    new = write(storage / "session" / "def456" / "ses_3.json", {
        "id": "ses_3", "projectID": "def456", "directory": str(store.workspace),
        "time": {"created": 1767225800000}})
    write(storage / "part" / "msg_20" / "prt_20.json",
          {"id": "prt_20", "messageID": "msg_20", "type": "text", "text": "hello"})
    write(storage / "message" / "ses_3" / "msg_20.json", {
        "id": "msg_20", "sessionID": "ses_3", "role": "user", "time": {"created": 1767225800001}})
    assert changed(f, new.parent).prompted == ["ses_3"]


# -- Copilot Chat (VS Code) ----------------------------------------------------------------------
def test_copilot_chat_sessions_are_followed(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = copilot_chat(home, store.workspace)
    doc = json.loads(session.read_text())
    session.unlink()
    session.parent.rmdir()  # VS Code makes chatSessions/ at the first chat
    f = follower(store, "copilot-chat", home)
    assert f.poll().sessions == []
    first = write(session, {**doc, "requests": doc["requests"][:1]})
    assert changed(f, first).prompted == ["s-1"]
    write(session, doc)  # the chat went on: the file is written again whole
    assert changed(f, session).prompted == ["s-1"]
    assert prompts(store, "s-1") == ["rename foo", "and tests?"]
    # another folder's chats are outside every root that is read; the editors' storage is
    # a lookout (a folder made there for this workspace later brings its chats in)
    other = session.parents[2] / "h2" / "chatSessions" / "other.json"
    assert not any(r.holds(other) for _, r in f.roots() if not r.lookout)
    assert changed(f, other).sessions == []


# -- Continue ------------------------------------------------------------------------------------
def test_continue_sessions_are_followed(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = continue_session(home, store.workspace)
    f = follower(store, "continue", home)
    assert f.poll().sessions == ["c-1"]
    doc = json.loads(session.read_text())
    doc["history"].append({"message": {"role": "user", "content": "thanks"}, "contextItems": []})
    write(session, doc)
    again = changed(f, session)
    assert (again.prompted, again.events) == (["c-1"], 1)
    new = write(session.with_name("c-3.json"), {
        "sessionId": "c-3", "workspaceDirectory": str(store.workspace),
        "history": [{"message": {"role": "user", "content": "hi"}, "contextItems": []}]})
    assert changed(f, new).prompted == ["c-3"]


def test_every_agent_source_is_followed(store: Store, tmp_path: Path) -> None:
    from turnback.importers import registry

    agents = [s.name for s in registry.SOURCES.values() if s.agent]
    assert registry.followable() == agents
    f = Follower(store, home=tmp_path / "home", env={})
    assert {name for name, _ in f.roots()} == set(agents)
    # no storage of this workspace yet: Copilot Chat only looks out for one
    assert all(r.lookout for name, r in f.roots() if name == "copilot-chat")


# -- a folder shared by every project ----------------------------------------------------------
class Counting:
    """Wraps a source's ``Matching``: counts the searches of the whole folder and the
    inputs asked about one by one."""

    def __init__(self, matching: Any) -> None:
        self.inner = matching
        self.searches = 0
        self.asked: list[Path] = []

    def candidates(self, ctx: Any) -> list[Path]:
        self.searches += 1
        out: list[Path] = self.inner.candidates(ctx)
        return out

    def belongs(self, ctx: Any, path: Path) -> bool:
        self.asked.append(path)
        return bool(self.inner.belongs(ctx, path))


def rollout(folder: Path, name: str, cwd: Path, sid: str) -> Path:
    f = folder / f"rollout-{name}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps({"timestamp": TS.format(0), "type": "session_meta",
                             "payload": {"id": sid, "cwd": str(cwd)}}) + "\n")
    return f


def user_message(f: Path, text: str) -> None:
    with f.open("a") as fh:
        fh.write(json.dumps({"timestamp": TS.format(1), "type": "event_msg",
                             "payload": {"type": "user_message", "message": text}}) + "\n")


def test_a_change_in_another_projects_session_costs_no_search(
        store: Store, ws: Path, tmp_path: Path, monkeypatch: Any) -> None:
    import dataclasses

    from turnback.importers import registry
    from turnback.importers.matching import Matching

    home = tmp_path / "home"
    day = home / ".codex" / "sessions" / "2026" / "01" / "01"
    other = tmp_path / "another-project"
    other.mkdir()
    theirs = [rollout(day, f"o{i}", other, f"0199aaaa-0000-7000-8000-00000000010{i}")
              for i in range(5)]
    ours = rollout(day, "ours", store.workspace, "0199aaaa-0000-7000-8000-000000000001")
    counting = Counting(registry.SOURCES["codex"].matching)
    monkeypatch.setitem(registry.SOURCES, "codex", dataclasses.replace(
        registry.SOURCES["codex"], matching=Matching(counting.candidates, counting.belongs),
        locate=lambda ctx, path: Matching(counting.candidates, counting.belongs).locate(ctx)))
    f = follower(store, "codex", home)
    assert f.poll().sessions == ["0199aaaa-0000-7000-8000-000000000001"]
    assert counting.searches == 1  # the first poll looks at everything, once
    counting.asked.clear()

    # another project's session grows: that one file is asked about, nothing searched
    user_message(theirs[2], "not ours")
    result = changed(f, theirs[2])
    assert (result.sessions, counting.searches, counting.asked) == ([], 1, [theirs[2]])
    # ours grows: read at once, as a known file (nothing asked)
    user_message(ours, "ours")
    assert changed(f, ours).prompted == ["0199aaaa-0000-7000-8000-000000000001"]
    # a new session of ours in a new day's folder: found by asking about it alone
    later = rollout(home / ".codex" / "sessions" / "2026" / "01" / "02", "new", store.workspace,
                    "0199aaaa-0000-7000-8000-000000000002")
    user_message(later, "a new session")
    assert changed(f, later.parent, later).prompted == ["0199aaaa-0000-7000-8000-000000000002"]
    assert counting.searches == 1


def test_every_source_of_a_shared_folder_asks_about_one_input() -> None:
    """Sources whose watch roots hold every project's sessions have a ``matching`` (else a
    change in another project would make them search their whole folder)."""
    from turnback.importers import registry

    shared = {"codex", "copilot-cli", "opencode", "continue", "cline", "roo-code", "kilo-code"}
    assert {s.name for s in registry.SOURCES.values() if s.matching is not None} == shared
