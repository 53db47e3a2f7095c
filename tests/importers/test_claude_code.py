"""Claude Code transcripts: real files read in place, counted independently; synthetic edges."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.importers import import_source
from turnback.importers.agents.claude_code import encode_project_dir
from turnback.interchange.export import export_jsonl

from .conftest import TRANSCRIPTS, need_transcripts, transcripts

CLAUDE_FILES = transcripts("claude-code/**/*.jsonl")
IDS = [str(p.relative_to(TRANSCRIPTS)) for p in CLAUDE_FILES]

# User text Claude Code writes itself (counted as notes, not prompts).
NOT_TYPED = ("[Request interrupted", "<local-command-", "<task-notification>", "<bash-stdout>",
             "<bash-stderr>", "<system-reminder>",
             # the prompt Claude Code gives its compaction sub-agent
             "Your task is to create a detailed summary of the conversation so far")


def raw_counts(path: Path) -> dict[str, Any]:
    """Count from the raw lines, independently of the importer."""
    tool_use = tool_result = prompts = 0
    edited: set[str] = set()
    last_output: dict[str, int] = {}
    messages_with_text: set[str] = set()
    for raw in path.read_bytes().splitlines():
        o = json.loads(raw)
        if o.get("type") == "assistant":
            m = o["message"]
            mid = m.get("id") or o["uuid"]
            for b in m["content"]:
                tool_use += b["type"] == "tool_use"
                if b["type"] == "tool_use" and b["name"] in ("Edit", "Write", "MultiEdit"):
                    edited.add(b["input"]["file_path"])
                if b["type"] == "text":
                    messages_with_text.add(mid)
            last_output[mid] = m.get("usage", {}).get("output_tokens", 0)
        elif o.get("type") == "user":
            content = o["message"]["content"]
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            tool_result += sum(b["type"] == "tool_result" for b in blocks)
            text = "\n\n".join(b["text"] for b in blocks if b["type"] == "text")
            flags = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
            if any(b["type"] == "text" for b in blocks) and not any(o.get(f) for f in flags):
                stripped = text.lstrip()
                prompts += bool(stripped) and not stripped.startswith(NOT_TYPED)
    return {
        "toolCalls": tool_use,
        "toolResults": tool_result,
        "prompts": prompts,
        "output": sum(last_output.values()),
        "responses": len(messages_with_text),
        "filesEdited": len(edited),
    }


def only_session(store: Store) -> str:
    sessions, total = store.sessions()
    assert total == 1
    return sessions[0].header.id


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=IDS)
def test_stats_equal_the_raw_counts(store: Store, path: Path) -> None:
    need_transcripts()
    result = import_source(store, "claude-code", path)
    assert result.problems == []
    sid = only_session(store)
    stats = store.stats(sid)
    want = raw_counts(path)
    assert stats["toolCalls"] == want["toolCalls"]
    assert stats["toolResults"] == want["toolResults"]
    assert stats["prompts"] == want["prompts"]
    assert stats["filesEdited"] == want["filesEdited"]
    assert stats["tokens"]["output"] == want["output"]
    # one response per API message that carries text, however many lines it spans
    responses = {e.data.get("messageId") for e in store.session(sid).events
                 if e.kind == "response"}
    assert len(responses) == want["responses"]


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=IDS)
def test_event_tree_edges_are_uuid_and_parent_uuid(store: Store, path: Path) -> None:
    need_transcripts()
    import_source(store, "claude-code", path)
    events = {e.id: e for e in store.session(only_session(store)).events}
    lines = 0
    for raw in path.read_bytes().splitlines():
        o = json.loads(raw)
        if not o.get("uuid"):
            continue
        lines += 1
        want = o.get("parentUuid") or o.get("logicalParentUuid")
        assert events[o["uuid"]].parent == want, o["uuid"]
    assert lines > 0


def test_compaction_joins_the_two_roots(store: Store) -> None:
    need_transcripts()
    path = TRANSCRIPTS / "claude-code/marot+spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    import_source(store, "claude-code", path)
    log = store.session("258c7280-ae70-4798-800f-63464d01a85d")
    boundary = [e for e in log.events if e.data.get("subtype") == "compact_boundary"]
    assert len(boundary) == 1
    b = boundary[0]
    assert b.parent == b.data["logicalParentUuid"] == "7c642069-996d-4ae0-a61c-554b35d36fb6"
    # one root for the conversation: every uuid line reaches the first line's root
    by_id = log.by_id()
    roots = set()
    for e in log.events:
        if e.kind in ("prompt", "response", "tool_call", "tool_result"):
            node = e
            while node.parent is not None and node.parent in by_id:
                node = by_id[node.parent]
            roots.add(node.id)
    assert len(roots) == 1


def test_subagents_are_sessions_linked_to_their_parent(store: Store) -> None:
    need_transcripts()
    folder = TRANSCRIPTS / "claude-code/marot+spotter"
    result = import_source(store, "claude-code", folder)
    parent = "258c7280-ae70-4798-800f-63464d01a85d"
    subs = [s for s in result.sessions if s.startswith(parent + ".")]
    assert sorted(subs) == [f"{parent}.agent-a881341", f"{parent}.agent-acompact-fffbd0"]
    header = store.session(f"{parent}.agent-a881341").header
    assert header.extra["parentSession"] == parent
    assert header.extra["agentId"] == "a881341"


def test_titles_come_from_summary_then_last_prompt(store: Store) -> None:
    need_transcripts()
    import_source(store, "claude-code",
                  TRANSCRIPTS / "claude-code/d-kimuson+claude-code-viewer/"
                  "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    import_source(store, "claude-code", TRANSCRIPTS / "claude-code/kvsankar+agent-history")
    titles = {s.header.id: s.header.title for s in store.sessions()[0]}
    assert titles["fe5e1c67-53e7-4862-81ae-d0e013e3270b"] == (
        "Empty Repo Setup: CLAUDE.md Foundation Created")
    assert titles["06090cb1-3e64-433a-bc7e-a621c0f596d2"] == "[REDACTED_PROMPT]"


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=IDS)
def test_import_twice_is_import_once(store: Store, path: Path) -> None:
    need_transcripts()
    first = import_source(store, "claude-code", path)
    sid = only_session(store)
    once = io.BytesIO()
    export_jsonl(store, sid, once)
    again = import_source(store, "claude-code", path)
    assert first.events > 0
    assert (again.events, again.checkpoints) == (0, 0)
    twice = io.BytesIO()
    export_jsonl(store, sid, twice)
    assert twice.getvalue() == once.getvalue()


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=IDS)
def test_truncated_copy_imports_the_whole_lines_and_reports_the_rest(
    store: Store, path: Path, tmp_path: Path
) -> None:
    need_transcripts()
    data = path.read_bytes()
    cut = int(len(data) * 0.6)
    while data[cut - 1 : cut] == b"\n":
        cut -= 1  # make sure the copy ends mid-line
    truncated = tmp_path / "cut" / path.name
    truncated.parent.mkdir()
    truncated.write_bytes(data[:cut])
    whole = tmp_path / "whole" / path.name
    whole.parent.mkdir()
    whole.write_bytes(data[: data.rindex(b"\n", 0, cut) + 1])

    result = import_source(store, "claude-code", truncated)
    cut_line = data[:cut].count(b"\n") + 1
    assert [(p.file, p.line) for p in result.problems] == [(str(truncated), cut_line)]
    assert "cut off" in result.problems[0].message

    (tmp_path / "ref").mkdir()
    reference = Store.open(tmp_path / "ref")
    expected = import_source(reference, "claude-code", whole)
    assert result.events == expected.events
    sid = only_session(store)
    assert store.stats(sid) == reference.stats(sid)


def test_a_grown_file_adds_only_its_new_lines(store: Store, tmp_path: Path) -> None:
    need_transcripts()
    path = TRANSCRIPTS / "claude-code/marot+spotter/subagent.jsonl"
    data = path.read_bytes()
    half = data[: data.index(b"\n", len(data) // 2) + 1]
    live = tmp_path / "live.jsonl"
    live.write_bytes(half)
    first = import_source(store, "claude-code", live)
    live.write_bytes(data)
    grown = import_source(store, "claude-code", live)

    (tmp_path / "ref").mkdir()
    reference = Store.open(tmp_path / "ref")
    import_source(reference, "claude-code", path)
    sid = only_session(store)
    got = {e.id for e in store.session(sid).events}
    want = {e.id for e in reference.session(sid).events}
    assert want <= got
    # The message cut at the half-way line got its usage twice (ids differ by its
    # last line); stats count a message's usage once, so the figures agree.
    assert all(i.endswith(":usage") for i in got - want)
    # every event is an imported line, or the event of a checkpoint the store made
    assert first.events + grown.events + first.checkpoints + grown.checkpoints == len(got)
    assert 0 < grown.events < len(want)
    assert store.stats(sid)["tokens"] == reference.stats(sid)["tokens"]
    assert store.stats(sid)["toolCalls"] == reference.stats(sid)["toolCalls"]


# -- synthetic transcripts: the cases the real files do not show -------------------------

def line(**obj: Any) -> str:
    base = {"sessionId": "s-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/nowhere",
            "isSidechain": False}
    return json.dumps({**base, **obj}) + "\n"


def assistant(uuid: str, parent: str | None, mid: str, blocks: list[Any],
              out: int = 1) -> str:
    return line(type="assistant", uuid=uuid, parentUuid=parent,
                message={"id": mid, "role": "assistant", "model": "m", "content": blocks,
                         "usage": {"input_tokens": 1, "output_tokens": out}})


def test_a_line_with_several_blocks_becomes_a_chain(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "s-1.jsonl"
    f.write_text(
        line(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"})
        + assistant("a1", "u1", "m1", [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        ], out=7)
        + line(type="user", uuid="u2", parentUuid="a1",
               message={"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": True}
               ]})
    )
    import_source(store, "claude-code", f)
    log = store.session("s-1")
    chain = [(e.id, e.parent, e.kind) for e in log.events if e.kind != "usage"]
    assert chain == [
        ("u1", None, "prompt"),
        ("a1", "u1", "thinking"),
        ("a1:1", "a1", "response"),
        ("a1:2", "a1:1", "tool_call"),
        ("u2", "a1:2", "tool_result"),
    ]
    stats = store.stats("s-1")
    assert (stats["toolCalls"], stats["toolCallsFailed"], stats["tokens"]["output"]) == (1, 1, 7)
    assert log.head == "a1:2:usage"  # the last event written: its path is the conversation


def test_usage_counts_once_per_message_with_the_last_figure(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "s-1.jsonl"
    f.write_text(
        line(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"})
        + assistant("a1", "u1", "m1", [{"type": "text", "text": "a"}], out=3)
        + assistant("a2", "a1", "m1", [{"type": "tool_use", "id": "t", "name": "X",
                                         "input": {}}], out=40)
        + line(type="progress", uuid="p1", parentUuid="a2", data={"type": "hook_progress"})
        + assistant("a3", "p1", "m1", [{"type": "text", "text": "b"}], out=90)
        + assistant("a4", "a3", "m2", [{"type": "text", "text": "c"}], out=5)
    )
    import_source(store, "claude-code", f)
    usage = [e for e in store.session("s-1").events if e.kind == "usage"]
    assert [(e.id, e.data["output"]) for e in usage] == [("a3:usage", 90), ("a4:usage", 5)]
    stats = store.stats("s-1")
    assert stats["tokens"]["output"] == 95
    raw = [e for e in store.session("s-1").events if e.kind == "raw"]
    assert raw[0].id == "p1" and raw[0].data["raw"]["data"] == {"type": "hook_progress"}


def test_unknown_lines_are_kept_raw_and_bad_lines_reported(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "s-1.jsonl"
    f.write_text(
        line(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"})
        + "{not json\n"
        + json.dumps({"type": "brand-new-thing", "payload": [1, 2]}) + "\n"
        + "[1, 2]\n"
    )
    result = import_source(store, "claude-code", f)
    assert [(p.line, p.message.split(" (")[0]) for p in result.problems] == [
        (2, "not valid JSON"), (4, "expected a JSON object, found list")]
    raw = [e for e in store.session("s-1").events if e.kind == "raw"]
    assert raw[0].data == {"type": "brand-new-thing",
                           "raw": {"type": "brand-new-thing", "payload": [1, 2]}}
    assert raw[0].parent == "u1"


def claude_home(tmp_path: Path, ws: Path) -> Path:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / encode_project_dir(str(ws.resolve()))
    project.mkdir(parents=True)
    return project


def test_file_history_snapshots_become_partial_checkpoints(
    store: Store, ws: Path, tmp_path: Path
) -> None:
    project = claude_home(tmp_path, ws)
    history = tmp_path / "home" / ".claude" / "file-history" / "s-1"
    history.mkdir(parents=True)
    (history / "aaaa000011112222@v1").write_bytes(b"old content\n")
    snapshot = {"messageId": "u1", "timestamp": "2026-01-01T00:00:00.000Z",
                "trackedFileBackups": {
                    "src/app.py": {"backupFileName": "aaaa000011112222@v1", "version": 1},
                    "new.txt": {"backupFileName": None, "version": 1},
                    "../../etc/passwd": {"backupFileName": "bbbb000011112222@v1", "version": 1},
                }}
    (project / "s-1.jsonl").write_text(
        json.dumps({"type": "file-history-snapshot", "messageId": "u1",
                    "snapshot": {**snapshot, "trackedFileBackups": {}},
                    "isSnapshotUpdate": False}) + "\n"
        + line(type="user", uuid="u1", parentUuid=None, cwd=str(ws),
               message={"role": "user", "content": "edit it"})
        + json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": snapshot,
                      "isSnapshotUpdate": True}) + "\n"
    )
    result = import_source(store, "claude-code", home=tmp_path / "home")
    assert result.checkpoints == 1
    assert [p.message.split(":")[0] for p in result.problems] == [
        "file-history backup of '../../etc/passwd' refused"]
    (cp,) = store.checkpoints("s-1")
    assert cp.partial and cp.event_id == "cp-" + cp.id
    assert store.read_file(cp.id, "src/app.py") == b"old content\n"
    assert cp.absent == ["new.txt"]
    checkpoint_event = store.find_event(cp.event_id, "s-1")
    assert checkpoint_event.parent == "u1"
    again = import_source(store, "claude-code", home=tmp_path / "home")
    assert (again.checkpoints, again.events) == (0, 0)


def test_default_location_is_this_workspace_and_honours_claude_config_dir(
    store: Store, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = claude_home(tmp_path, ws)
    mine = line(type="user", uuid="u1", parentUuid=None, cwd=str(ws),
                message={"role": "user", "content": "mine"})
    (project / "s-1.jsonl").write_text(mine)
    # same encoded folder, another cwd (the encoding is lossy): not this workspace
    (project / "s-2.jsonl").write_text(
        line(type="user", uuid="u9", parentUuid=None, sessionId="s-2", cwd=str(ws) + "-x",
             message={"role": "user", "content": "theirs"}))
    sub = project / "s-1" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-abc.jsonl").write_text(
        line(type="user", uuid="v1", parentUuid=None, isSidechain=True, agentId="abc", cwd=str(ws),
             message={"role": "user", "content": "sub task"}))
    result = import_source(store, "claude-code", home=tmp_path / "home")
    assert result.sessions == ["s-1", "s-1.agent-abc"]

    other = tmp_path / "elsewhere"
    os.rename(tmp_path / "home" / ".claude", other)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    again = import_source(store, "claude-code", home=tmp_path / "home")
    assert again.sessions == ["s-1", "s-1.agent-abc"] and again.events == 0


def test_odd_ids_become_valid_stable_ids(store: Store, tmp_path: Path) -> None:
    long_uuid = "a" * 128  # valid, but no room for a ':1' suffix
    f = tmp_path / "s-1.jsonl"
    f.write_text(
        line(type="user", uuid="bad id/with spaces", parentUuid=None,
             message={"role": "user", "content": "go"})
        + assistant(long_uuid, "bad id/with spaces", "m1", [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    )
    import_source(store, "claude-code", f)
    events = store.session("s-1").events
    ids = [e.id for e in events]
    assert ids[1] == long_uuid and len(ids) == 4
    assert all(len(i) <= 128 and " " not in i for i in ids)
    assert events[1].parent == ids[0] and events[2].parent == long_uuid
    import_source(store, "claude-code", f)
    assert [e.id for e in store.session("s-1").events] == ids


def test_the_compaction_agents_prompt_is_not_a_persons(store: Store) -> None:
    """The sub-agent that compacts a conversation is prompted by Claude Code itself."""
    need_transcripts()
    path = (TRANSCRIPTS / "claude-code/marot+spotter/258c7280-ae70-4798-800f-63464d01a85d"
            / "subagents/agent-acompact-fffbd0.jsonl")
    import_source(store, "claude-code", path)
    sid = only_session(store)
    assert store.stats(sid)["prompts"] == 0
    notes = [e for e in store.session(sid).events if e.data.get("compactPrompt")]
    assert len(notes) == 1 and notes[0].kind == "note"
    assert notes[0].data["text"].startswith("Your task is to create a detailed summary")
