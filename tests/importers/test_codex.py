"""Codex rollouts: real files counted independently, and a synthetic rollout of every item type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.importers import import_source

from .conftest import TRANSCRIPTS, need_transcripts, transcripts

CODEX_FILES = transcripts("codex/**/*.jsonl")
TOOL_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")


def raw_counts(path: Path) -> dict[str, Any]:
    prompts = calls = results = 0
    final_total = 0
    session = ""
    for raw in path.read_bytes().splitlines():
        o = json.loads(raw)
        p = o.get("payload", {})
        if o["type"] == "session_meta":
            session = p["id"]
        elif o["type"] == "event_msg" and p.get("type") == "user_message":
            prompts += 1
        elif o["type"] == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            final_total = p["info"]["total_token_usage"]["output_tokens"]
        elif o["type"] == "response_item":
            calls += p.get("type") in TOOL_CALLS
            results += p.get("type", "").endswith("_call_output")
    return {"session": session, "prompts": prompts, "toolCalls": calls, "toolResults": results,
            "output": final_total}


@pytest.mark.parametrize("path", CODEX_FILES, ids=[p.parent.name for p in CODEX_FILES])
def test_stats_equal_the_raw_counts(store: Store, path: Path) -> None:
    need_transcripts()
    result = import_source(store, "codex", path)
    want = raw_counts(path)
    assert result.sessions == [want["session"]] and result.problems == []
    stats = store.stats(want["session"])
    assert stats["prompts"] == want["prompts"] == 1
    assert stats["toolCalls"] == want["toolCalls"]
    assert stats["toolResults"] == want["toolResults"]
    # per-turn figures add up to Codex's own running total
    assert stats["tokens"]["output"] == want["output"]
    again = import_source(store, "codex", path)
    assert again.events == 0


def test_header_from_session_meta_and_turn_context(store: Store) -> None:
    need_transcripts()
    import_source(store, "codex", TRANSCRIPTS / "codex")
    h = store.session("019b64e5-57fa-7463-b644-fba7e456f905").header
    assert (h.agent, h.source, h.model) == ("codex", "codex", "gpt-5.2-codex")
    assert h.cwd == "/Users/macmini/Code/homelab-migration"
    assert h.title.startswith("can you analyse the MD files")


def rollout(*items: tuple[str, dict[str, Any]]) -> str:
    lines = [{"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
              "payload": {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/w",
                          "timestamp": "2026-01-01T00:00:00.000Z", "cli_version": "0.50.0"}}]
    for i, (typ, payload) in enumerate(items, 1):
        lines.append({"timestamp": f"2026-01-01T00:00:{i:02d}.000Z", "type": typ,
                      "payload": payload})
    return "".join(json.dumps(x) + "\n" for x in lines)


def usage(total_out: int, last_out: int) -> dict[str, Any]:
    return {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 100, "cached_input_tokens": 40,
                              "output_tokens": total_out},
        "last_token_usage": {"input_tokens": 100, "cached_input_tokens": 40,
                             "output_tokens": last_out, "reasoning_output_tokens": 2}}}


def test_every_item_type(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
    f.write_text(rollout(
        ("event_msg", {"type": "task_started", "turn_id": "t1"}),
        ("turn_context", {"cwd": "/w", "model": "gpt-5-codex"}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "fix the bug"}]}),
        ("event_msg", {"type": "user_message", "message": "fix the bug", "images": []}),
        ("response_item", {"type": "reasoning", "summary": [
            {"type": "summary_text", "text": "**Looking**"}], "encrypted_content": "xx"}),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                           "arguments": json.dumps({"command": ["bash", "-lc", "false"]})}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": json.dumps(
            {"output": "", "metadata": {"exit_code": 1, "duration_seconds": 0.1}})}),
        ("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                           "status": "completed", "input": "*** Begin Patch\n*** End Patch\n"}),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                           "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess."}),
        ("event_msg", usage(10, 10)),
        ("event_msg", usage(10, 10)),  # Codex repeats a count: not a second turn's usage
        ("event_msg", {"type": "token_count", "info": None, "rate_limits": {}}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Fixed."}]}),
        ("event_msg", {"type": "agent_message", "message": "Fixed."}),
        ("event_msg", {"type": "task_complete", "turn_id": "t1", "duration_ms": 900}),
        ("event_msg", {"type": "task_started", "turn_id": "t2"}),
        ("event_msg", {"type": "user_message", "message": "and the docs"}),
        ("event_msg", usage(25, 15)),
        ("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        ("compacted", {"message": "summary of the chat"}),
        ("something_new", {"x": 1}),
    ))
    result = import_source(store, "codex", f)
    sid = "0199aaaa-0000-7000-8000-000000000001"
    assert result.sessions == [sid] and result.problems == []
    stats = store.stats(sid)
    assert {k: stats[k] for k in ("prompts", "responses", "toolCalls", "toolResults",
                                  "toolCallsFailed", "iterations", "iterationsFailed")} == {
        "prompts": 2, "responses": 1, "toolCalls": 2, "toolResults": 2, "toolCallsFailed": 1,
        "iterations": 2, "iterationsFailed": 1}
    assert stats["tokens"] == {"input": 120, "output": 25, "cacheRead": 80, "cacheCreation": 0}
    log = store.session(sid)
    kinds = [e.kind for e in log.events]
    assert kinds.count("raw") == 6  # meta, turn_context, repeated and empty counts, agent msg, new
    assert kinds.count("thinking") == 1 and kinds.count("note") == 2
    call = next(e for e in log.events if e.kind == "tool_call")
    assert call.data == {"name": "shell", "input": {"command": ["bash", "-lc", "false"]},
                         "toolUseId": "c1"}
    # one chain in file order
    assert all(e.parent == p.id for p, e in zip(log.events, log.events[1:], strict=False))
    assert store.session(sid).header.model == "gpt-5-codex"


def test_default_location_finds_this_workspace_rollouts(
    store: Store, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    day = tmp_path / "codex-home" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    mine = rollout(("event_msg", {"type": "user_message", "message": "hi"})).replace(
        '"cwd": "/w"', json.dumps("cwd") + ": " + json.dumps(str(ws)))
    (day / "rollout-a.jsonl").write_text(mine)
    (day / "rollout-b.jsonl").write_text(rollout().replace("0001", "0002"))  # cwd /w
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    result = import_source(store, "codex")
    assert result.sessions == ["0199aaaa-0000-7000-8000-000000000001"]


def test_patch_failures_and_unstarted_aborts(store: Store, tmp_path: Path) -> None:
    meta = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "c-1", "cwd": "/w", "timestamp": "2026-01-01T00:00:00.000Z"}}

    def line(ptype: str, **payload: Any) -> dict[str, Any]:
        kind = "event_msg" if ptype in ("turn_aborted", "user_message") else "response_item"
        return {"timestamp": "2026-01-01T00:00:01.000Z", "type": kind,
                "payload": {"type": ptype, **payload}}

    lines = [
        meta,
        line("user_message", message="patch it"),
        line("custom_tool_call", name="apply_patch", call_id="p1",
             input="*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch"),
        line("custom_tool_call_output", call_id="p1",
             output="apply_patch verification failed: Failed to find expected lines in a.py"),
        line("ghost_snapshot", ghost_commit={"id": "9f1e", "parent": "a0b1"}),
        line("turn_aborted", reason="interrupted"),
    ]
    path = tmp_path / "rollout-c-1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_source(store, "codex", path)
    log = store.session("c-1")
    result = next(e for e in log.events if e.kind == "tool_result")
    assert result.data["isError"] is True
    ghost = log.events[-2]
    assert ghost.kind == "note"
    assert ghost.data["sourceCheckpoint"] == {"tool": "codex", "commit": "9f1e", "parent": "a0b1"}
    aborted = log.events[-1]
    assert aborted.kind == "iteration_completed"
    assert aborted.data["success"] is False and aborted.data["started"] is False
    stats = store.stats("c-1")
    assert (stats["toolCallsFailed"], stats["iterationsFailed"], stats["filesEdited"]) == (1, 1, 1)
