"""OpenCode (TypeScript), Copilot Chat and Continue: fixtures written to their documented
layouts (no real files of these tools were available), discovery and re-import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.importers import import_source
from turnback.importers.registry import discover


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def opencode_storage(home: Path, ws: Path) -> Path:
    storage = home / ".local" / "share" / "opencode" / "storage"
    session = write(storage / "session" / "abc123" / "ses_1.json", {
        "id": "ses_1", "projectID": "abc123", "directory": str(ws), "title": "Add a test",
        "version": "0.9.0", "time": {"created": 1767225600000, "updated": 1767225660000}})
    write(storage / "session" / "abc123" / "ses_2.json", {
        "id": "ses_2", "projectID": "abc123", "directory": "/elsewhere", "title": "x",
        "time": {"created": 1767225600000}})
    write(storage / "message" / "ses_1" / "msg_01.json", {
        "id": "msg_01", "sessionID": "ses_1", "role": "user", "time": {"created": 1767225601000}})
    write(storage / "part" / "msg_01" / "prt_01.json", {
        "id": "prt_01", "messageID": "msg_01", "type": "text", "text": "add a test for a.py"})
    write(storage / "part" / "msg_01" / "prt_02.json", {
        "id": "prt_02", "messageID": "msg_01", "type": "text", "synthetic": True,
        "text": "Called the Read tool"})
    write(storage / "message" / "ses_1" / "msg_02.json", {
        "id": "msg_02", "sessionID": "ses_1", "role": "assistant", "modelID": "claude-x",
        "time": {"created": 1767225602000, "completed": 1767225610000},
        "tokens": {"input": 120, "output": 30, "reasoning": 5, "cache": {"read": 1000,
                                                                         "write": 10}}})
    parts = [
        {"id": "prt_03", "type": "step-start"},
        {"id": "prt_04", "type": "reasoning", "text": "a test file"},
        {"id": "prt_05", "type": "tool", "tool": "write", "callID": "call_1",
         "state": {"status": "completed", "input": {"filePath": str(ws / "test_a.py")},
                   "output": "written"}},
        {"id": "prt_06", "type": "tool", "tool": "bash", "callID": "call_2",
         "state": {"status": "error", "input": {"command": "pytest"}, "error": "1 failed"}},
        {"id": "prt_07", "type": "patch", "hash": "4b825dc6", "files": [str(ws / "test_a.py")]},
        {"id": "prt_08", "type": "text", "text": "Added test_a.py."},
        {"id": "prt_09", "type": "step-finish"},
    ]
    for p in parts:
        write(storage / "part" / "msg_02" / f"{p['id']}.json", {**p, "messageID": "msg_02"})
    return session


def test_opencode_storage(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = opencode_storage(home, ws)
    assert [(f.source, f.path) for f in discover(ws, home=home, env={})] == [
        ("opencode", session)]
    result = import_source(store, "opencode", home=home, env={})
    assert result.problems == [] and result.sessions == ["ses_1"]
    log = store.session("ses_1")
    assert [e.kind for e in log.events] == [
        "prompt", "note", "thinking", "tool_call", "tool_result", "tool_call", "tool_result",
        "note", "response", "usage"]
    assert log.header.title == "Add a test" and log.header.model == "claude-x"
    stats = store.stats("ses_1")
    assert (stats["prompts"], stats["responses"], stats["toolCalls"], stats["toolCallsFailed"],
            stats["filesEdited"]) == (1, 1, 2, 1, 1)
    assert stats["tokens"] == {"input": 120, "output": 30, "cacheRead": 1000, "cacheCreation": 10}
    assert log.events[7].data["sourceCheckpoint"] == {"tool": "opencode", "hash": "4b825dc6"}
    assert import_source(store, "opencode", home=home, env={}).events == 0


def copilot_chat(home: Path, ws: Path) -> Path:
    storage = home / ".config" / "Code" / "User" / "workspaceStorage"
    write(storage / "h1" / "workspace.json", {"folder": ws.as_uri()})
    write(storage / "h2" / "workspace.json", {"folder": "file:///elsewhere"})
    write(storage / "h2" / "chatSessions" / "other.json", {"version": 3, "requests": []})
    return write(storage / "h1" / "chatSessions" / "s-1.json", {
        "version": 3, "sessionId": "s-1", "creationDate": 1767225600000,
        "requesterUsername": "me", "responderUsername": "GitHub Copilot",
        "requests": [
            {"requestId": "request_1", "timestamp": 1767225601000, "modelId": "gpt-x",
             "message": {"text": "rename foo", "parts": []},
             "response": [
                 {"value": "I'll rename it.", "supportThemeIcons": False},
                 {"kind": "toolInvocationSerialized", "toolId": "copilot_findTextInFiles",
                  "toolCallId": "t1", "invocationMessage": {"value": "Searching foo"},
                  "pastTenseMessage": {"value": "Found 2 matches"}, "isComplete": True},
                 {"kind": "textEditGroup", "uri": {"fsPath": str(ws / "a.py"), "scheme": "file"},
                  "edits": [[{"text": "bar", "range": {}}]], "done": True},
                 {"kind": "markdownContent", "content": {"value": " Done."}}],
             "result": {"timings": {"totalElapsed": 900}}},
            {"requestId": "request_2", "timestamp": 1767225700000,
             "message": {"text": "and tests?"}, "response": [],
             "result": {"errorDetails": {"message": "rate limited"}}}]})


def test_copilot_chat_workspace_storage(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = copilot_chat(home, ws)
    assert [(f.source, f.path) for f in discover(ws, home=home, env={})] == [
        ("copilot-chat", session)]
    result = import_source(store, "copilot-chat", home=home, env={})
    assert result.problems == [] and result.sessions == ["s-1"]
    log = store.session("s-1")
    assert [e.kind for e in log.events] == [
        "prompt", "response", "tool_call", "tool_result", "tool_call", "response",
        "prompt", "note"]
    assert log.events[5].data["text"] == " Done."
    stats = store.stats("s-1")
    assert (stats["prompts"], stats["responses"], stats["toolCalls"], stats["filesEdited"]) == \
        (2, 1, 2, 1)  # the two parts of one answer are one response (one messageId)
    assert log.header.model == "gpt-x" and log.header.title == "rename foo"
    assert import_source(store, "copilot-chat", session).events == 0


def continue_session(home: Path, ws: Path) -> Path:
    sessions = home / ".continue" / "sessions"
    write(sessions / "sessions.json", [{"sessionId": "c-1", "title": "Fix", "dateCreated":
                                        "2026-01-01T00:00:00Z", "workspaceDirectory": str(ws)}])
    write(sessions / "c-2.json", {"sessionId": "c-2", "workspaceDirectory": "/elsewhere",
                                  "history": []})
    return write(sessions / "c-1.json", {
        "sessionId": "c-1", "title": "Fix the bug", "workspaceDirectory": ws.as_uri(),
        "history": [
            {"message": {"role": "user", "content": [{"type": "text", "text": "fix b.py"}]},
             "contextItems": []},
            {"message": {"role": "thinking", "content": "look first"}, "contextItems": []},
            {"message": {"role": "assistant", "content": "",
                         "toolCalls": [{"id": "tc1", "type": "function", "function": {
                             "name": "edit_existing_file",
                             "arguments": json.dumps({"filepath": "b.py", "changes": "x"})}}]},
             "contextItems": [],
             "toolCallState": {"toolCallId": "tc1", "status": "errored",
                               "output": [{"content": "permission denied"}]}},
            {"message": {"role": "assistant", "content": "I could not edit b.py."},
             "contextItems": []}]})


def test_continue_sessions(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = continue_session(home, ws)
    assert [(f.source, f.path) for f in discover(ws, home=home, env={})] == [
        ("continue", session)]
    result = import_source(store, "continue", home=home, env={})
    assert result.problems == [] and result.sessions == ["c-1"]
    log = store.session("c-1")
    assert [e.kind for e in log.events] == ["prompt", "thinking", "tool_call", "tool_result",
                                            "response"]
    stats = store.stats("c-1")
    assert (stats["prompts"], stats["toolCallsFailed"], stats["filesEdited"]) == (1, 1, 1)
    assert log.header.title == "Fix the bug" and log.header.cwd == str(ws)
    # a grown history adds only the new message
    doc = json.loads(session.read_text())
    doc["history"].append({"message": {"role": "user", "content": "thanks"}})
    session.write_text(json.dumps(doc))
    assert import_source(store, "continue", session).events == 1
