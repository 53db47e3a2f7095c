"""Gemini CLI, Copilot CLI, Cline and Crush: the real files, counted apart from the importers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.importers import import_source

from .conftest import TRANSCRIPTS, need_transcripts

GEMINI = "gemini-cli/Mai0313+VibeCodingTracker/test_conversation_gemini.json"
COPILOT = "copilot-cli/Mai0313+VibeCodingTracker/test_conversation_copilot.json"
CLINE = "cline/gmfstu+Online-Card-Architecture"
CRUSH = "crush/jsanchezdaza+conecta4/crush.db"


def only(result: Any) -> str:
    assert len(result.sessions) == 1
    return str(result.sessions[0])


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def test_gemini_real_chat(store: Store) -> None:
    need_transcripts()
    path = TRANSCRIPTS / GEMINI
    doc = json.loads(path.read_text())
    result = import_source(store, "gemini-cli", path)
    assert result.problems == []
    sid = only(result)
    assert sid == doc["sessionId"]
    stats = store.stats(sid)
    messages = doc["messages"]
    assert stats["prompts"] == sum(m["type"] == "user" for m in messages)
    assert stats["responses"] == sum(m["type"] == "gemini" and bool(text_of(m["content"]).strip())
                                     for m in messages)
    tokens = [m["tokens"] for m in messages if m.get("tokens")]
    assert stats["tokens"]["output"] == sum(t["output"] for t in tokens)
    assert stats["tokens"]["cacheRead"] == sum(t["cached"] for t in tokens)
    assert stats["tokens"]["input"] == sum(t["input"] - t["cached"] for t in tokens)
    thoughts = sum(len(m.get("thoughts", [])) for m in messages)
    log = store.session(sid)
    assert sum(e.kind == "thinking" for e in log.events) == thoughts
    assert log.header.model == "gemini-2.5-pro"
    assert log.header.title.startswith("任務")
    assert import_source(store, "gemini-cli", path).events == 0


def gemini_jsonl(folder: Path) -> Path:
    """A chat as newer Gemini CLI versions write it (chatRecordingService.ts): a metadata
    line, messages written again when they change, ``$set`` and ``$rewindTo`` lines."""
    lines: list[dict[str, Any]] = [
        {"sessionId": "g-1", "projectHash": "h", "startTime": "2026-01-01T00:00:00.000Z",
         "lastUpdated": "2026-01-01T00:00:00.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-01-01T00:00:01.000Z", "type": "user",
         "content": [{"text": "fix a.py"}]},
        {"id": "m1", "timestamp": "2026-01-01T00:00:02.000Z", "type": "gemini", "content": "",
         "model": "gemini-3", "toolCalls": [
             {"id": "c1", "name": "replace", "args": {"file_path": "/w/a.py"},
              "status": "executing", "timestamp": "2026-01-01T00:00:02.000Z"}]},
        # the same message again, its call finished
        {"id": "m1", "timestamp": "2026-01-01T00:00:02.000Z", "type": "gemini", "content": "done",
         "model": "gemini-3", "tokens": {"input": 100, "output": 7, "cached": 40, "total": 107},
         "toolCalls": [
             {"id": "c1", "name": "replace", "args": {"file_path": "/w/a.py"},
              "status": "error", "timestamp": "2026-01-01T00:00:02.000Z",
              "result": [{"functionResponse": {"id": "c1", "name": "replace",
                                               "response": {"error": "no match"}}}]}]},
        {"$set": {"lastUpdated": "2026-01-01T00:00:03.000Z", "summary": "Fixing a.py"}},
        {"id": "u2", "timestamp": "2026-01-01T00:00:04.000Z", "type": "user", "content": "oops"},
        {"$rewindTo": "u2"},
        {"id": "u3", "timestamp": "2026-01-01T00:00:05.000Z", "type": "user", "content": "again"},
    ]
    path = folder / "session-2026-01-01T00-00-g1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_gemini_jsonl_replays_updates_sets_and_rewinds(store: Store, tmp_path: Path) -> None:
    path = gemini_jsonl(tmp_path)
    result = import_source(store, "gemini-cli", path)
    assert result.problems == []
    log = store.session("g-1")
    got = [(e.kind, e.data.get("text") or e.data.get("name") or "") for e in log.events]
    assert got == [("prompt", "fix a.py"), ("response", "done"), ("tool_call", "replace"),
                   ("tool_result", ""), ("usage", ""), ("prompt", "again")]
    assert log.events[3].data["isError"] is True and log.events[3].data["output"] == "no match"
    assert log.header.title == "Fixing a.py"
    stats = store.stats("g-1")
    assert stats["toolCallsFailed"] == 1 and stats["filesEdited"] == 1
    assert stats["tokens"]["input"] == 60 and stats["tokens"]["cacheRead"] == 40
    # Gemini CLI appends: a re-import adds only the new message
    with path.open("a") as f:
        f.write(json.dumps({"id": "m2", "timestamp": "2026-01-01T00:00:06.000Z",
                            "type": "gemini", "content": "ok"}) + "\n")
    assert import_source(store, "gemini-cli", path).events == 1


def test_another_tools_file_in_a_folder_is_skipped_and_reported(store: Store,
                                                                tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    gemini_jsonl(folder)
    (folder / "session-claude.jsonl").write_text(json.dumps(
        {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "hi"}}) + "\n")
    result = import_source(store, "gemini-cli", folder)
    assert result.sessions == ["g-1"]
    (problem,) = result.problems
    assert "looks like a Claude Code transcript" in problem.message
    assert "turnback import claude-code" in problem.message


def test_gemini_discovery_by_project_hash(tmp_path: Path) -> None:
    from turnback.importers.agents.gemini import project_hash
    from turnback.importers.registry import discover

    ws = tmp_path / "ws"
    ws.mkdir()
    chats = tmp_path / "home" / ".gemini" / "tmp" / project_hash(ws) / "chats"
    chats.mkdir(parents=True)
    path = gemini_jsonl(chats)
    other = tmp_path / "home" / ".gemini" / "tmp" / ("0" * 64) / "chats"
    other.mkdir(parents=True)
    gemini_jsonl(other)
    found = discover(ws, home=tmp_path / "home", env={})
    assert [(f.source, f.path) for f in found] == [("gemini-cli", path)]


def test_copilot_cli_real_session(store: Store) -> None:
    need_transcripts()
    path = TRANSCRIPTS / COPILOT
    doc = json.loads(path.read_text())
    result = import_source(store, "copilot-cli", path)
    assert result.problems == []
    sid = only(result)
    stats = store.stats(sid)
    timeline = doc["timeline"]
    calls = [t for t in timeline if t["type"] == "tool_call_completed"]
    assert stats["prompts"] == sum(t["type"] == "user" for t in timeline)
    assert stats["responses"] == sum(t["type"] == "copilot" for t in timeline)
    assert stats["toolCalls"] == stats["toolResults"] == len(calls)
    assert stats["toolCallsFailed"] == sum(c["result"]["type"] != "success" for c in calls)
    edited = {c["arguments"]["path"] for c in calls if c["name"] == "str_replace_editor"
              and c["arguments"].get("command") in ("create", "str_replace", "insert")}
    assert stats["filesEdited"] == len(edited) == 4
    assert import_source(store, "copilot-cli", path).events == 0


def cline_counts(ui: list[dict[str, Any]]) -> dict[str, int]:
    edits = {"editedExistingFile", "newFileCreated", "fileDeleted", "appliedDiff"}
    prompts = calls = responses = 0
    edited: set[str] = set()
    output = 0
    for i, m in enumerate(ui):
        what = m.get("say") or m.get("ask")
        if (what == "text" and i == 0) or what == "user_feedback":
            prompts += 1
        elif m.get("say") in ("text", "completion_result"):
            responses += 1
        if what == "tool":
            calls += 1
            tool = json.loads(m["text"])
            if tool.get("tool") in edits:
                edited.add(tool["path"])
        elif what == "command":
            calls += 1
        elif what == "api_req_started":
            output += json.loads(m["text"]).get("tokensOut", 0)
    return {"prompts": prompts, "toolCalls": calls, "responses": responses,
            "filesEdited": len(edited), "output": output}


def test_cline_real_task(store: Store) -> None:
    need_transcripts()
    folder = TRANSCRIPTS / CLINE
    ui = json.loads((folder / "ui_messages.json").read_text())
    result = import_source(store, "cline", folder)
    assert result.problems == []
    sid = only(result)
    stats = store.stats(sid)
    want = cline_counts(ui)
    assert stats["prompts"] == want["prompts"]
    assert stats["toolCalls"] == want["toolCalls"]
    assert stats["responses"] == want["responses"]
    assert stats["filesEdited"] == want["filesEdited"]
    assert stats["tokens"]["output"] == want["output"]
    log = store.session(sid)
    hashes = [e.data["sourceCheckpoint"]["hash"] for e in log.events
              if "sourceCheckpoint" in e.data]
    assert hashes == [m["lastCheckpointHash"] for m in ui if m.get("say") == "checkpoint_created"]
    assert log.header.cwd == "/workspaces/Online-Card-Architecture"
    # the ui_messages.json itself names the same task; importing again adds nothing
    assert import_source(store, "cline", folder / "ui_messages.json").events == 0


def test_cline_discovery_matches_the_working_folder(tmp_path: Path) -> None:
    from turnback.importers.registry import discover

    ws = tmp_path / "ws"
    ws.mkdir()
    storage = tmp_path / "home" / ".config" / "Code" / "User" / "globalStorage"
    for ext, task, cwd in (("saoudrizwan.claude-dev", "1", ws), ("saoudrizwan.claude-dev", "2",
                                                                  tmp_path / "other"),
                           ("rooveterinaryinc.roo-cline", "3", ws)):
        folder = storage / ext / "tasks" / task
        folder.mkdir(parents=True)
        (folder / "ui_messages.json").write_text(json.dumps([
            {"ts": 1, "type": "say", "say": "text", "text": "hi"},
            {"ts": 2, "type": "say", "say": "api_req_started",
             "text": json.dumps({"request": f"# Current Working Directory ({cwd}) Files"})}]))
    found = discover(ws, home=tmp_path / "home", env={})
    assert sorted((f.source, f.path.name) for f in found) == [("cline", "1"), ("roo-code", "3")]


def crush_rows(db: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for role, parts in conn.execute("SELECT role, parts FROM messages"):
            for p in json.loads(parts):
                yield role, p
    finally:
        conn.close()


def test_crush_real_database_and_its_file_versions(tmp_path: Path) -> None:
    need_transcripts()
    db = TRANSCRIPTS / CRUSH
    ws = tmp_path / "conecta4"  # the project's name: its paths map into this workspace
    ws.mkdir()
    store = Store.open(ws)
    try:
        result = import_source(store, "crush", db)
        assert result.problems == []
        sid = only(result)
        stats = store.stats(sid)
        parts = list(crush_rows(db))
        assert stats["prompts"] == sum(r == "user" and p["type"] == "text" for r, p in parts)
        assert stats["toolCalls"] == sum(p["type"] == "tool_call" for _, p in parts)
        assert stats["toolResults"] == sum(p["type"] == "tool_result" for _, p in parts)
        edited = {json.loads(p["data"]["input"]).get("file_path") for _, p in parts
                  if p["type"] == "tool_call" and p["data"]["name"] in ("write", "multiedit",
                                                                        "edit")}
        assert stats["filesEdited"] == len(edited)
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        files = conn.execute("SELECT path, version, content, created_at FROM files").fetchall()
        totals = conn.execute("SELECT prompt_tokens, completion_tokens FROM sessions").fetchone()
        conn.close()
        assert (stats["tokens"]["input"], stats["tokens"]["output"]) == totals
        groups = {c for *_, c in files}
        with_v0 = {c for _, v, _, c in files if v == 0}
        assert result.checkpoints == len(groups) + len(with_v0)
        # the last version of each file is what the last checkpoint holding it has
        last: dict[str, tuple[int, str]] = {}
        for path, version, content, _c in files:
            if path not in last or version > last[path][0]:
                last[path] = (version, content)
        cps = [cp for cp in store.checkpoints(sid) if cp.label.startswith("after")]
        for path, (_v, content) in last.items():
            rel = path.split("/conecta4/", 1)[1]
            holding = [cp for cp in cps if store.read_file(cp.id, rel) is not None]
            assert store.read_file(holding[-1].id, rel) == content.encode()
        again = import_source(store, "crush", db)
        assert (again.events, again.checkpoints) == (0, 0)
    finally:
        store.close()


def test_crush_database_is_read_as_hostile_input(store: Store, tmp_path: Path) -> None:
    bad = tmp_path / "crush.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    result = import_source(store, "crush", bad)
    assert result.sessions == [] and result.problems
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    result = import_source(store, "crush", other)
    assert "not a crush database" in result.problems[0].message
    assert other.read_bytes() == before  # opened read-only: never written
    link = tmp_path / "link.db"
    link.symlink_to(other)
    with pytest.raises(Exception, match="symbolic link"):
        import_source(store, "crush", link)
