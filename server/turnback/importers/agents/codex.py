"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``. Codex keeps no event ids, so
an event's id is a hash of its line and its parent is the previous event: the
session is one chain. Mapping (docs/IMPORT.md has the table):

- ``session_meta`` → the session header (its ``id`` is the session id);
- ``event_msg/user_message`` → ``prompt`` (the ``response_item`` user messages
  are the same text plus injected context: kept as notes);
- ``response_item`` message (assistant) → ``response``; reasoning → ``thinking``;
  function_call / custom_tool_call / local_shell_call / web_search_call →
  ``tool_call``; their ``*_output`` → ``tool_result``;
- ``event_msg/token_count`` → ``usage`` from ``last_token_usage``, only when
  the running total moved (Codex repeats the same count);
- ``task_started`` / ``task_complete`` / ``turn_aborted`` →
  ``iteration_started`` / ``iteration_completed`` (aborted = failed; an abort
  with no started task still ends one, ``started: false``);
- ``ghost_snapshot`` (Codex's undo commit) → a ``note`` linking the commit
  (``sourceCheckpoint``);
- ``turn_context`` sets the model; everything else is kept as ``raw``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...errors import Unsafe
from ...events import JSON, Event, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    Context,
    EventRecord,
    MetaRecord,
    RawLine,
    Record,
    SessionRecord,
    as_dict,
    as_int,
    as_list,
    as_str,
    derive_id,
    safe_id,
    short_title,
)
from ..given_path import file_or_folder
from ..header_line import HeaderLineParser
from ..inputs import DEFAULT_MAX_LINE, find, open_regular
from ..matching import Matching, same_dir

AGENT = "codex"
MAX_PENDING_LINES = 50
_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_EXIT_RE = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)
# How Codex reports a patch it could not apply (plain text, no exit code): a failure.
_PATCH_FAILED = ("apply_patch verification failed",)

TOOL_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """Rollouts to import: PATH (a file or a folder), or this workspace's rollouts."""
    if path is not None:
        return file_or_folder(ctx, path, "**", "*.jsonl")
    return MATCHING.locate(ctx)


# every project's rollouts share ~/.codex/sessions; the first line's cwd says whose
MATCHING = Matching(
    lambda ctx: find(ctx.codex_dir / "sessions", "**", "rollout-*.jsonl", refused=ctx.refused),
    lambda ctx, f: same_dir(rollout_cwd(f, ctx.max_line), ctx.workspace))


def rollout_cwd(path: Path, limit: int = DEFAULT_MAX_LINE) -> str | None:
    """The ``cwd`` of a rollout's ``session_meta`` (its first line)."""
    try:
        with open_regular(path) as f:
            first = f.readline(limit + 1)
        if len(first) > limit:
            return None
        obj = orjson.loads(first)
    except (OSError, Unsafe, orjson.JSONDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    cwd = as_dict(obj.get("payload")).get("cwd")
    return cwd if isinstance(cwd, str) else None


def _texts(content: Any) -> str:
    """The text of a message's content items (input_text, output_text, …)."""
    if isinstance(content, str):
        return content
    parts = []
    for item in as_list(content):
        text = as_dict(item).get("text")
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def _output_text_and_error(output: Any) -> tuple[Any, bool]:
    """A tool output as text, and whether it reports a failure (exit code ≠ 0)."""
    if isinstance(output, dict):
        text = output.get("content", output.get("output", output))
        if output.get("success") is False:
            return text, True
        return _output_text_and_error(text) if isinstance(text, str) else (text, False)
    if not isinstance(output, str):
        return output, False
    try:
        parsed = orjson.loads(output)
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and "output" in parsed:
        code = as_dict(parsed.get("metadata")).get("exit_code")
        return parsed["output"], isinstance(code, int) and code != 0
    if output.lstrip().startswith(_PATCH_FAILED):
        return output, True
    m = _EXIT_RE.search(output[:200])
    return output, bool(m and int(m.group(1)) != 0)


class CodexParser(HeaderLineParser):
    max_held = MAX_PENDING_LINES

    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.last_event: str | None = None
        self.last_ts = ""
        self.model: str | None = None
        self.titled = False
        self.total: JSON | None = None  # last total_token_usage, to skip repeats
        self.iteration = 0
        self.open_turn: str | None = None  # turn id of a started, unfinished task

    def is_header(self, obj: JSON) -> bool:
        return obj.get("type") == "session_meta"

    def start(self, meta: JSON | None) -> Iterator[Record]:
        payload = as_dict(meta.get("payload")) if meta else {}
        found = _UUID_RE.search(self.path.name)
        sid = (
            safe_id(payload.get("id"))
            or (found.group(0) if found else None)
            or safe_id(self.path.stem)
            or derive_id(self.path.name)
        )
        self.session_id = sid
        started = as_str(payload.get("timestamp")) or next(
            (str(o["timestamp"]) for o, _ in self.held if isinstance(o.get("timestamp"), str)),
            "",
        )
        self.last_ts = started
        extra: JSON = {}
        for key in ("cli_version", "originator", "source", "model_provider"):
            if isinstance(payload.get(key), str):
                extra[key] = payload[key]
        git = payload.get("git")
        if isinstance(git, dict):
            extra["git"] = git
        yield SessionRecord(
            SessionHeader(
                id=sid,
                agent=AGENT,
                started=started,
                cwd=as_str(payload.get("cwd")),
                source=AGENT,
                extra=extra,
            )
        )

    def on_line(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        sid = self.session_id
        assert sid is not None
        ts = as_str(obj.get("timestamp")) or self.last_ts
        self.last_ts = ts
        kind, data, meta = self._map(obj)
        if meta:
            yield from meta
        event_id = "c" + derive_id(sid, line.data)[1:]
        yield EventRecord(Event(event_id, sid, self.last_event, ts, kind, data))
        self.last_event = event_id

    def _map(self, obj: JSON) -> tuple[str, JSON, list[Record]]:
        sid = self.session_id
        assert sid is not None
        line_type = obj.get("type")
        payload = as_dict(obj.get("payload"))
        ptype = payload.get("type")
        raw: JSON = {"type": f"{line_type}/{ptype}" if ptype else line_type, "raw": obj}
        meta: list[Record] = []
        if line_type == "session_meta":
            return Kind.RAW, raw, meta
        if line_type == "turn_context":
            model = as_str(payload.get("model"))
            if model and model != self.model:
                self.model = model
                meta.append(MetaRecord(sid, {"model": model}))
            return Kind.RAW, raw, meta
        if line_type == "response_item":
            return (*self._response_item(payload, raw), meta)
        if line_type == "event_msg":
            return (*self._event_msg(payload, raw, meta), meta)
        if line_type == "compacted":
            text = as_str(payload.get("message")) or "conversation compacted"
            return Kind.NOTE, {"text": text, "compacted": True}, meta
        return Kind.RAW, raw, meta

    def _response_item(self, p: JSON, raw: JSON) -> tuple[str, JSON]:
        ptype = p.get("type")
        if ptype == "message":
            role = as_str(p.get("role")) or "?"
            text = _texts(p.get("content"))
            if role == "assistant":
                data: JSON = {"text": text}
                if isinstance(p.get("phase"), str):
                    data["phase"] = p["phase"]
                return Kind.RESPONSE, data
            # user/developer items repeat the prompt or carry injected context
            return Kind.NOTE, {"text": text, "role": role, "context": True}
        if ptype == "reasoning":
            summary = [
                as_str(as_dict(s).get("text")) or "" for s in as_list(p.get("summary"))
            ]
            text = "\n".join(s for s in summary if s) or _texts(p.get("content"))
            return Kind.THINKING, {"text": text, "encrypted": bool(p.get("encrypted_content"))}
        if ptype in TOOL_CALLS:
            return Kind.TOOL_CALL, self._tool_call(p)
        if ptype == "ghost_snapshot":
            # Codex's own undo point: a commit in the workspace's git object store. Linked
            # (Turnback does not read it), like Cline's and OpenCode's snapshots.
            commit = as_dict(p.get("ghost_commit"))
            return Kind.NOTE, {"text": "snapshot (Codex ghost commit)",
                               "sourceCheckpoint": {"tool": AGENT, "commit": commit.get("id"),
                                                    "parent": commit.get("parent")}}
        if ptype in TOOL_OUTPUTS:
            output, is_error = _output_text_and_error(p.get("output"))
            return Kind.TOOL_RESULT, {
                "toolUseId": as_str(p.get("call_id")),
                "isError": is_error,
                "output": output,
            }
        return Kind.RAW, raw

    def _tool_call(self, p: JSON) -> JSON:
        ptype = p.get("type")
        name = as_str(p.get("name"))
        tool_input: Any
        if ptype == "function_call":
            args = p.get("arguments")
            try:
                tool_input = orjson.loads(args) if isinstance(args, str) else args
            except orjson.JSONDecodeError:
                tool_input = args
        elif ptype == "custom_tool_call":
            tool_input = p.get("input")
        elif ptype == "local_shell_call":
            name = name or "local_shell"
            tool_input = p.get("action")
        else:  # web_search_call
            name = name or "web_search"
            tool_input = p.get("action")
        data: JSON = {
            "name": name or "?",
            "input": tool_input,
            "toolUseId": as_str(p.get("call_id")) or as_str(p.get("id")),
        }
        if isinstance(p.get("status"), str):
            data["status"] = p["status"]
        return data

    def _event_msg(self, p: JSON, raw: JSON, meta: list[Record]) -> tuple[str, JSON]:
        sid = self.session_id
        assert sid is not None
        ptype = p.get("type")
        if ptype == "user_message":
            text = as_str(p.get("message")) or ""
            if not self.titled and short_title(text):
                self.titled = True
                meta.append(MetaRecord(sid, {"title": short_title(text)}, TITLE_FIRST_PROMPT))
            data: JSON = {"text": text}
            images = as_list(p.get("images")) + as_list(p.get("local_images"))
            if images:
                data["images"] = len(images)
            return Kind.PROMPT, data
        if ptype == "token_count":
            return self._token_count(p, raw)
        if ptype in ("task_started", "turn_started"):
            self.iteration += 1
            self.open_turn = as_str(p.get("turn_id")) or f"#{self.iteration}"
            return Kind.ITERATION_STARTED, {"iteration": self.iteration, "turnId": p.get("turn_id")}
        if ptype in ("task_complete", "turn_complete", "turn_aborted"):
            unstarted = self.open_turn is None
            if unstarted:
                if ptype != "turn_aborted":
                    return Kind.RAW, raw  # a repeat, or the start was cut off
                # Codex aborts a turn interrupted before its task started: still a
                # turn that ended, failed — counted as one.
                self.iteration += 1
            self.open_turn = None
            data = {"iteration": self.iteration, "success": ptype != "turn_aborted",
                    "turnId": p.get("turn_id")}
            if unstarted:
                data["started"] = False
            if ptype == "turn_aborted":
                data["reason"] = p.get("reason")
            if isinstance(p.get("duration_ms"), int):
                data["durationMs"] = p["duration_ms"]
            return Kind.ITERATION_COMPLETED, data
        return Kind.RAW, raw

    def _token_count(self, p: JSON, raw: JSON) -> tuple[str, JSON]:
        info = as_dict(p.get("info"))
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if not isinstance(last, dict) or (isinstance(total, dict) and total == self.total):
            return Kind.RAW, raw  # rate-limit only, or a repeat of the count before
        if isinstance(total, dict):
            self.total = total
        # OpenAI's input_tokens include the cached ones; Turnback's `input` does not.
        cached = as_int(last.get("cached_input_tokens"))
        return Kind.USAGE, {
            "input": max(0, as_int(last.get("input_tokens")) - cached),
            "output": as_int(last.get("output_tokens")),
            "cacheRead": cached,
            "cacheCreation": 0,
            "reasoning": as_int(last.get("reasoning_output_tokens")),
        }
