"""The seed formats 000-004, written the way the seed programs write them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turnback import InvalidInput, Store
from turnback.importers import import_source

from .conftest import TRANSCRIPTS, need_transcripts

# -- 000: loop history -----------------------------------------------------------------


def test_ralph_real_history(store: Store) -> None:
    need_transcripts()
    path = TRANSCRIPTS / "ralph/mikeyobrien+rho/history.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    starts = [x for x in lines if x["type"]["kind"] == "loop_started"]
    result = import_source(store, "ralph", path)
    assert result.problems == [] and len(result.sessions) == len(starts) == 5
    stats = [store.stats(s) for s in result.sessions]
    assert [s["prompts"] for s in stats] == [1] * 5
    done = "completion_promise"
    assert [s["completion"] for s in stats] == [None, None, done, done, done]
    third = store.session(result.sessions[2])
    assert third.header.title == "Cross-Platform Rho Implementation"
    assert third.header.ended == "2026-02-05T05:16:01.600Z"
    assert [e.kind for e in third.events] == ["loop_started", "loop_completed"]
    assert third.events[0].ts == "2026-02-05T04:48:27.336Z"
    assert import_source(store, "ralph", path).events == 0


def test_ralph_every_kind(store: Store, ws: Path) -> None:
    (ws / ".ralph").mkdir()
    kinds: list[dict[str, Any]] = [
        {"kind": "loop_started", "prompt": "build it"},
        {"kind": "iteration_started", "iteration": 1},
        {"kind": "event_published", "topic": "build.task", "payload": "task 1"},
        {"kind": "iteration_completed", "iteration": 1, "success": False},
        {"kind": "loop_resumed", "from_iteration": 1},
        {"kind": "merge_queued"},
        {"kind": "merge_started", "pid": 42},
        {"kind": "merge_failed", "reason": "conflict"},
        {"kind": "loop_terminated", "signal": "SIGTERM"},
        {"kind": "from_the_future", "x": 1},
    ]
    (ws / ".ralph" / "history.jsonl").write_text("".join(
        json.dumps({"ts": f"2026-01-01T00:00:{i:02d}.000000001Z", "type": k}) + "\n"
        for i, k in enumerate(kinds)) + '{"ts": "2026-01-01T00:01:00Z", "type": {"kind": "loop_st')
    result = import_source(store, "ralph")  # the workspace's .ralph/history.jsonl
    assert [p.line for p in result.problems] == [11]
    (sid,) = result.sessions
    stats = store.stats(sid)
    assert (stats["iterations"], stats["iterationsFailed"], stats["eventsPublished"]) == (1, 1, 1)
    assert stats["termination"] == "SIGTERM"
    assert stats["merge"] == {"status": "failed", "reason": "conflict"}
    assert stats["durationMs"] == 8000
    last = store.session(sid).events[-1]
    assert last.kind == "raw" and last.data["raw"]["type"] == {"kind": "from_the_future", "x": 1}


# -- 001: checkpoint JSON with file diffs ------------------------------------------------


def system_time(secs: int) -> dict[str, int]:
    return {"secs_since_epoch": secs, "nanos_since_epoch": 500_000_000}


def checkpoint_file(folder: Path, cid: str, secs: int, prompts: list[str], responses: list[str],
                    tools: list[dict[str, Any]], diffs: list[dict[str, Any]]) -> None:
    doc = {
        "id": cid,
        "timestamp": system_time(secs),
        "stats": {"start_time": system_time(1_767_225_600), "total_messages": len(prompts),
                  "total_tool_calls": len(tools), "total_duration": {"secs": 3, "nanos": 0},
                  "estimated_tokens": 100},
        "user_prompts": prompts,
        "assistant_responses": responses,
        "tool_calls": tools,
        "file_diffs": [{**d, "timestamp": system_time(secs)} for d in diffs],
    }
    folder.mkdir(exist_ok=True)
    (folder / f"{cid}.json").write_text(json.dumps(doc, indent=2))


def test_checkpoint_json_history_and_diff_pairs(store: Store, ws: Path, tmp_path: Path) -> None:
    folder = tmp_path / "checkpoints"
    write = {"tool_name": "write_file", "arguments": '{"path": "a.txt"}', "result": "ok",
             "success": True}
    fail = {"tool_name": "bash", "arguments": "not json", "result": "boom", "success": False}
    checkpoint_file(folder, "cp-1", 1_767_225_700, ["make a.txt"], ["made it"], [write],
                    [{"path": str(ws / "a.txt"), "before": "", "after": "hello\n"}])
    result = import_source(store, "checkpoint-json", folder)
    assert result.checkpoints == 2 and result.problems == []
    checkpoint_file(folder, "cp-2", 1_767_225_800, ["make a.txt", "change it"],
                    ["made it", "changed"], [write, fail],
                    [{"path": str(ws / "a.txt"), "before": "hello\n", "after": "bye\n"},
                     {"path": "/etc/passwd", "before": "x", "after": "y"}])
    result = import_source(store, "checkpoint-json", folder)
    assert result.checkpoints == 2
    assert [p.message.split(":")[0] for p in result.problems] == [
        "file diff for '/etc/passwd' refused"]
    (sid,) = result.sessions
    log = store.session(sid)
    assert [e.kind for e in log.events if e.kind != "checkpoint"] == [
        "prompt", "tool_call", "tool_result", "response", "prompt", "tool_call", "tool_result",
        "response"]
    stats = store.stats(sid)
    assert (stats["prompts"], stats["toolCalls"], stats["toolCallsFailed"]) == (2, 2, 1)
    assert log.header.title == "make a.txt"
    assert log.header.started == "2026-01-01T00:00:00.500Z"
    cps = store.checkpoints(sid)
    assert [c.label for c in cps] == ["before cp-1", "after cp-1", "before cp-2", "after cp-2"]
    assert [store.read_file(c.id, "a.txt") for c in cps] == [b"", b"hello\n", b"hello\n", b"bye\n"]
    assert all(c.partial for c in cps)
    again = import_source(store, "checkpoint-json", folder)
    assert (again.events, again.checkpoints) == (0, 0)


# -- 002: event records with parent ids --------------------------------------------------


def record(rid: str, parent: str | None, secs: int, event: dict[str, Any]) -> str:
    if "part_type" in event:
        event = {"run_id": "r1", "session_id": "s1", **event}
    return json.dumps({"id": rid, "session_id": "s1", "parent_id": parent,
                       "timestamp": f"2026-01-01T00:00:{secs:02d}.123456789Z",
                       "event": event}) + "\n"


def test_event_records_keep_the_tree(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "s1.jsonl"
    f.write_text(
        record("e1", None, 1, {"part_type": "run_started", "provider": "anthropic",
                               "max_iterations": 5})
        + record("e2", "e1", 2, {"part_type": "iteration_started", "iteration": 1})
        + record("e3", "e2", 3, {"part_type": "text_delta", "iteration": 1, "delta": "Let me"})
        + record("e4", "e3", 4, {"part_type": "tool_call_requested", "iteration": 1,
                                 "call": {"call_id": "c1", "tool_name": "read_file",
                                          "input": {"path": "a"}}})
        + record("e5", "e4", 5, {"part_type": "tool_call_failed", "iteration": 1,
                                 "call_id": "c1", "tool_name": "read_file", "error": "nope"})
        + record("e6", "e4", 6, {"part_type": "model_output", "iteration": 1,
                                 "stop_reason": "end_turn", "directive_count": 2,
                                 "usage": {"input_tokens": 10, "output_tokens": 4,
                                           "cache_read_tokens": 2, "cache_creation_tokens": 1}})
        + record("e7", "e6", 7, {"part_type": "run_finished", "reason": "completed",
                                 "total_iterations": 1, "final_answer": "done"})
        + record("e8", "e7", 8, {"RunPaused": {"why": "externally tagged, unknown"}})
    )
    result = import_source(store, "event-records", f)
    assert result.sessions == ["s1"] and result.problems == []
    log = store.session("s1")
    assert [(e.id, e.parent, e.kind) for e in log.events] == [
        ("e1", None, "loop_started"), ("e2", "e1", "iteration_started"),
        ("e3", "e2", "response"), ("e4", "e3", "tool_call"), ("e5", "e4", "tool_result"),
        ("e6", "e4", "response"), ("e6:usage", "e6", "usage"), ("e7", "e6", "loop_completed"),
        ("e8", "e7", "raw")]
    stats = store.stats("s1")
    assert stats["completion"] == "completed" and stats["toolCallsFailed"] == 1
    assert stats["tokens"] == {"input": 10, "output": 4, "cacheRead": 2, "cacheCreation": 1}
    assert log.events[-1].data["type"] == "run_paused"


# -- 003: JSONL with a meta header line --------------------------------------------------


def test_meta_jsonl(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    f = folder / "2026-05-01T10-00-00Z.jsonl"
    f.write_text(
        json.dumps({"meta": {"started": "2026-05-01T10:00:00Z", "model": "fast", "version": 1}})
        + "\n" + json.dumps({"role": "user", "content": "hi there"})
        + "\n" + json.dumps({"role": "assistant", "content": "hello",
                             "tool_calls": [{"id": "t1", "function": {
                                 "name": "ls", "arguments": '{"dir": "."}'}}]})
        + "\n" + json.dumps({"role": "tool", "tool_call_id": "t1", "content": "a.txt"})
        + "\n" + json.dumps({"role": "user", "content": "hi there"})  # the same turn again
        + "\n" + json.dumps({"what": "is this"})
        + "\n" + '{"role": "assistant", "cont'  # a crash mid-write
    )
    result = import_source(store, "meta-jsonl", folder)
    assert [(p.line, "cut off" in p.message) for p in result.problems] == [(7, True)]
    (sid,) = result.sessions
    log = store.session(sid)
    assert [e.kind for e in log.events] == ["prompt", "response", "tool_call", "tool_result",
                                            "prompt", "raw"]
    assert log.header.model == "fast" and log.header.started == "2026-05-01T10:00:00.000Z"
    assert log.events[2].data == {"name": "ls", "input": {"dir": "."}, "toolUseId": "t1"}
    stats = store.stats(sid)
    assert (stats["prompts"], stats["toolCalls"], stats["toolResults"]) == (2, 1, 1)
    with f.open("a") as fh:  # the next run appends after repairing nothing: the tail stays
        fh.write('\n{"role": "assistant", "content": "bye"}\n')
    again = import_source(store, "meta-jsonl", folder)
    assert again.events == 1 and [p.line for p in again.problems] == [7]


# -- 004: whole-conversation snapshot ----------------------------------------------------


def snapshot(messages: list[Any], pinned: list[bool]) -> str:
    return json.dumps({"version": 1, "messages": messages, "pinned": pinned}, indent=2)


USER_HI = {"User": {"blocks": [{"Text": {"text": "hi"}}]}}
CALL = {"Assistant": {"blocks": [{"Text": "let me look"},
                                 {"ToolCall": {"id": "c1", "name": "fetch", "args": {"x": 1}}}]}}
RESULT = {"User": {"blocks": [{"ToolResult": {"call_id": "c1", "content": {"Error": "404"}}}]}}
ANSWER = {"Assistant": {"blocks": [{"Reasoning": {"text": "hmm", "signature": None}},
                                   {"Text": "not found"}]}}


def test_snapshot_json_grows_and_branches(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "snap.json"
    f.write_text(snapshot([USER_HI, CALL], [True, False]))
    first = import_source(store, "snapshot-json", f)
    (sid,) = first.sessions
    f.write_text(snapshot([USER_HI, CALL, RESULT, ANSWER], [True, False, False, False]))
    grown = import_source(store, "snapshot-json", f)
    assert (first.events, grown.events) == (3, 3)
    log = store.session(sid)
    assert [e.kind for e in log.events] == ["prompt", "response", "tool_call", "tool_result",
                                            "thinking", "response"]
    assert all(b.parent == a.id for a, b in zip(log.events, log.events[1:], strict=False))
    assert log.events[0].data == {"text": "hi", "pinned": True}
    assert log.events[3].data == {"toolUseId": "c1", "isError": True, "output": "404"}
    # compacted: the history was rewritten, so it starts a branch of its own
    f.write_text(snapshot([{"User": {"blocks": [{"Text": "summary of before"}]}}, ANSWER],
                          [False, False]))
    assert import_source(store, "snapshot-json", f).events == 3
    roots = [e for e in store.session(sid).events if e.parent is None]
    assert len(roots) == 2


def test_snapshot_json_bad_version_is_reported(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "snap.json"
    f.write_text(json.dumps({"version": 999, "messages": [], "pinned": []}))
    result = import_source(store, "snapshot-json", f)
    assert result.sessions == []
    assert "unsupported snapshot version 999" in result.problems[0].message


@pytest.mark.parametrize("source", ["checkpoint-json", "event-records", "meta-jsonl",
                                    "snapshot-json", "turnback"])
def test_sources_without_a_usual_place_need_a_path(store: Store, source: str) -> None:
    with pytest.raises(InvalidInput, match="needs a PATH"):
        import_source(store, source)


def test_a_missing_path_says_what_to_name(store: Store) -> None:
    """Each source's refusal names the file or folder it reads (one wording, given_path.py)."""
    wanted = {
        "checkpoint-json": "a checkpoint .json file or their folder",
        "event-records": "a session .jsonl file or a folder of them",
        "meta-jsonl": "a session .jsonl file or its sessions/ folder",
        "snapshot-json": "a snapshot .json file or folder",
        "turnback": "an exported .jsonl file or folder",
    }
    for source, what in wanted.items():
        with pytest.raises(InvalidInput) as caught:
            import_source(store, source)
        assert caught.value.message == f"source '{source}' needs a PATH: {what}"
