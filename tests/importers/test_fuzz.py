"""Fuzz: whatever the lines hold, no importer crashes, and what it yields the store accepts."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnback import Store
from turnback.events import Event
from turnback.importers import registry
from turnback.importers.base import (
    CheckpointRecord,
    Context,
    DocumentParser,
    EventRecord,
    FileParser,
    MetaRecord,
    RawLine,
    Record,
    SessionRecord,
    is_valid_id,
)
from turnback.importers.result import ImportResult
from turnback.importers.writer import RecordWriter
from turnback.models import Problem

# Keys and values the formats use, so the fuzz reaches past "unknown line".
KEYS = ["type", "subtype", "uuid", "parentUuid", "logicalParentUuid", "sessionId", "timestamp",
        "message", "content", "id", "model", "usage", "output_tokens", "input_tokens", "text",
        "thinking", "tool_use_id", "is_error", "name", "input", "snapshot", "messageId",
        "trackedFileBackups", "backupFileName", "summary", "lastPrompt", "leafUuid", "isMeta",
        "payload", "role", "call_id", "arguments", "output", "info", "total_token_usage",
        "last_token_usage", "turn_id", "meta", "ts", "kind", "prompt", "iteration", "success",
        "event", "part_type", "session_id", "parent_id", "call", "tool_calls", "function",
        "agentId", "cwd", "summary_text", "data", "head", "session", "parent"]
WORDS = ["user", "assistant", "system", "progress", "summary", "last-prompt", "text", "thinking",
         "tool_use", "tool_result", "file-history-snapshot", "compact_boundary", "session_meta",
         "turn_context", "response_item", "event_msg", "message", "reasoning", "function_call",
         "function_call_output", "custom_tool_call", "token_count", "user_message",
         "task_started", "task_complete", "turn_aborted", "loop_started", "iteration_completed",
         "run_started", "model_output", "text_delta", "tool_call_requested", "run_finished",
         "session", "meta", "u1", "u2", "m1", "a.txt", "../x", "/etc/passwd",
         "2026-01-01T00:00:00.000Z", "not a time", "bad id!", ""]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                    st.floats(allow_nan=False), st.sampled_from(WORDS), st.text(max_size=12))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=30,
)
objects = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)
json_lines = objects.map(lambda o: json.dumps(o).encode() + b"\n")  # big ints, Infinity too
junk_lines = st.one_of(st.binary(max_size=60).map(lambda b: b + b"\n"),
                       st.sampled_from([b"{\n", b"[]\n", b"null\n", b"\n", b'"x"\n', b"{}\n"]))
aider_lines = st.tuples(
    st.sampled_from(["#### ", "> ", "", "```", "# aider chat started at 2025-01-01 00:00:00",
                     "> Tokens: 1.5k sent, 2 received.", "> Applied edit to a.py",
                     "> Commit 0123abcd msg", "####", ">"]),
    st.text(max_size=20),
).map(lambda t: (t[0] + t[1]).encode("utf-8", "surrogatepass") + b"\n")
line_lists = st.lists(st.one_of(json_lines, json_lines, junk_lines, aider_lines), max_size=25)

# TURNBACK_FUZZ=20 runs twenty times the examples (a longer hunt than CI's).
SCALE = max(1, int(os.environ.get("TURNBACK_FUZZ", "1")))

LINE_SOURCES = [name for name, s in registry.SOURCES.items()
                if isinstance(s.parser, type) and issubclass(s.parser, FileParser)]
DOC_SOURCES = ["checkpoint-json", "snapshot-json", "gemini-cli", "qwen-code", "copilot-cli",
               "cline", "roo-code", "copilot-chat", "continue"]


def check_records(records: list[Record]) -> None:
    for rec in records:
        if isinstance(rec, EventRecord):
            e: Event = rec.event
            assert is_valid_id(e.id) and is_valid_id(e.session)
            assert e.parent is None or is_valid_id(e.parent)
            assert isinstance(e.ts, str) and isinstance(e.data, dict)
            orjson.dumps(e.to_json())  # storable
        elif isinstance(rec, SessionRecord):
            assert is_valid_id(rec.header.id)
        elif isinstance(rec, CheckpointRecord):
            assert is_valid_id(rec.checkpoint_id)
        else:
            assert isinstance(rec, (MetaRecord, Problem))


def run_lines(source: str, lines: list[bytes], folder: Path) -> list[Record]:
    name = {"claude-code": "s.jsonl", "aider": ".aider.chat.history.md"}.get(source, "x.jsonl")
    path = folder / "subagents" / name if source == "claude-code" and len(lines) % 2 else \
        folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    ctx = Context(workspace=folder, home=folder / "home", env={})
    parser = registry.get(source).parser(path, ctx)
    assert isinstance(parser, FileParser)
    out: list[Record] = []
    offset = 0
    for number, data in enumerate(lines, 1):
        out.extend(parser.feed(RawLine(number, offset, offset + len(data), data)))
        offset += len(data)
    out.extend(parser.finish(True))
    return out


@settings(max_examples=150 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(LINE_SOURCES), lines=line_lists)
def test_line_importers_never_crash(source: str, lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as d:
        check_records(run_lines(source, lines, Path(d)))


@settings(max_examples=40 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(LINE_SOURCES), lines=line_lists)
def test_what_importers_yield_the_store_takes(source: str, lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "ws").mkdir()
        records = run_lines(source, lines, folder / "ws")
        store = Store.open(folder / "ws", store_dir=folder / "store")
        writer = RecordWriter(store, ImportResult())
        for rec in records:
            writer.add(rec)
        writer.close()


documents = st.one_of(
    st.fixed_dictionaries({"version": st.sampled_from([1, 1, 2]),
                           "messages": st.lists(values, max_size=6),
                           "pinned": st.lists(st.booleans(), max_size=6)}),
    st.fixed_dictionaries({"id": values, "timestamp": values, "stats": values,
                           "user_prompts": st.lists(values, max_size=4),
                           "assistant_responses": st.lists(values, max_size=4),
                           "tool_calls": st.lists(values, max_size=4),
                           "file_diffs": st.lists(st.dictionaries(
                               st.sampled_from(["path", "before", "after"]), values), max_size=3)}),
    # Gemini CLI, Copilot CLI and Cline shapes, with any values inside
    st.fixed_dictionaries({"sessionId": values, "projectHash": values, "messages": st.lists(
        st.fixed_dictionaries({"id": st.text(max_size=4), "type": st.sampled_from(
            ["user", "gemini", "info", 1]), "content": values, "toolCalls": values,
            "thoughts": values, "tokens": values}), max_size=5)}),
    st.fixed_dictionaries({"sessionId": values, "timeline": st.lists(
        st.fixed_dictionaries({"id": values, "type": st.sampled_from(
            ["user", "copilot", "tool_call_completed", "info", None]), "text": values,
            "arguments": values, "result": values}), max_size=5)}),
    st.fixed_dictionaries({"version": values, "sessionId": values, "requests": st.lists(
        st.fixed_dictionaries({"requestId": values, "message": values, "timestamp": values,
                               "response": st.lists(st.one_of(values, st.fixed_dictionaries(
                                   {"kind": st.sampled_from(["textEditGroup", "thinking",
                                                             "toolInvocationSerialized"]),
                                    "uri": values, "isComplete": values})), max_size=4),
                               "result": values}), max_size=4)}),
    st.fixed_dictionaries({"sessionId": values, "workspaceDirectory": values, "history": st.lists(
        st.fixed_dictionaries({"message": st.fixed_dictionaries({
            "role": st.sampled_from(["user", "assistant", "tool", "thinking", 3]),
            "content": values, "toolCalls": values}), "toolCallState": values}), max_size=5)}),
    st.lists(st.fixed_dictionaries({"ts": values, "type": st.sampled_from(["say", "ask"]),
                                    "say": st.sampled_from(["text", "tool", "command",
                                                            "command_output", "api_req_started",
                                                            "checkpoint_created", "reasoning"]),
                                    "text": values}), max_size=6),
    values,
)


@settings(max_examples=120 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(DOC_SOURCES), doc=documents,
       raw=st.booleans())
def test_document_importers_never_crash(source: str, doc: Any, raw: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        path = folder / "doc.json"
        text = json.dumps(doc)
        path.write_bytes(text.encode() if not raw else text[:-1].encode())
        parser = registry.get(source).parser(path, Context(folder, folder, {}))
        assert isinstance(parser, DocumentParser)
        check_records(list(parser.parse()))
