"""Claude Code transcripts: ``~/.claude/projects/<encoded cwd>/<session>.jsonl``.

Mapping (docs/IMPORT.md has the full table):

- every line that has a ``uuid`` becomes an event with that id and parent
  ``parentUuid``; a ``compact_boundary`` root gets ``logicalParentUuid`` as
  parent, so the conversation before and after a compaction is one tree;
- a line carrying several content blocks becomes one event per block: the
  first keeps the line's uuid, the others get ``<uuid>:1``, ``<uuid>:2`` …
  chained below it, and a later line whose parent is that uuid hangs below
  the last of them, so the path root → head reads in order;
- assistant blocks: text → ``response``, thinking → ``thinking``, tool_use →
  ``tool_call``; user blocks: tool_result → ``tool_result``, typed text →
  ``prompt`` (text injected by Claude Code itself → ``note``);
- one ``usage`` event per API message (``message.id``) with the figures of
  the message's last line, as a leaf ``<last line id>:usage``;
- lines without a uuid (summary, last-prompt, queue-operation,
  file-history-snapshot) and unknown types are kept as ``raw`` events,
  chained after the previous event; summary / last-prompt also set the title;
- ``file-history-snapshot`` → a partial checkpoint of the backed-up files,
  read from ``file-history/<session>/<backupFileName>`` when present;
- ``<session>/subagents/agent-*.jsonl`` → a session of its own,
  ``<session>.<file stem>``, whose header names the parent session.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InvalidInput, Unsafe
from ...events import JSON, Event, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    TITLE_LAST_PROMPT,
    TITLE_SUMMARY,
    CheckpointRecord,
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
    sub_id,
    workspace_relpath,
)
from ..header_line import HeaderLineParser
from ..inputs import DEFAULT_MAX_LINE, find, open_regular, read_regular
from ..matching import same_dir

AGENT = "claude-code"

# User-role text that Claude Code writes itself rather than the person typing:
# kept as notes so that ``prompts`` counts what a person asked.
NOT_PROMPT_PREFIXES = (
    "[Request interrupted",
    "<local-command-",
    "<task-notification>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
)

# The prompt Claude Code itself gives the sub-agent that compacts a conversation
# (``subagents/agent-acompact-*.jsonl``): the tool's own text, not a person's.
COMPACT_PROMPT_PREFIX = "Your task is to create a detailed summary of the conversation so far"

# Lines that end a turn: the message before them is complete.
TURN_END_SUBTYPES = frozenset({"turn_duration", "stop_hook_summary"})

# Without a sessionId after this many lines, the file name stands in for it.
MAX_PENDING_LINES = 200
# Split lines remembered so that their children hang below their last block.
MAX_REMAP = 50_000


def encode_project_dir(cwd: str) -> str:
    """Claude Code's folder name for a project: every non-alphanumeric becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def _between(text: str, tag: str) -> str | None:
    """What ``<tag>(.*?)</tag>`` (dot matching newlines) finds first, found by two ``find``s:
    the expression scanned to the end from every opening tag, so a prompt of 50,000 of them
    and no closing one took time growing with the square of its length (64 MiB are read)."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    end = text.find(f"</{tag}>", start)
    return None if end < 0 else text[start:end]


def prompt_title(text: str) -> str:
    """A title from a prompt; a slash command reads as ``/name args``."""
    command = _between(text, "command-name")
    if command is not None:
        args = _between(text, "command-args")
        text = f"{command.strip()} {args.strip() if args is not None else ''}"
    return short_title(text)


def is_prompt_text(text: str) -> bool:
    stripped = text.lstrip()
    return bool(stripped) and not stripped.startswith(NOT_PROMPT_PREFIXES)


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """Transcripts to import: PATH (a file or a folder), or this workspace's sessions.

    Links and FIFOs in the folders are passed over (``ctx.refused`` lists them).
    """
    refused = ctx.refused
    if path is not None:
        if path.is_dir():
            return (find(path, "*.jsonl", refused=refused)
                    + find(path, "*", "subagents", "*.jsonl", refused=refused))
        return [path]
    project = ctx.claude_dir / "projects" / encode_project_dir(str(ctx.workspace))
    files: list[Path] = []
    for main in find(project, "*.jsonl", refused=refused):
        cwd = first_cwd(main, limit=ctx.max_line)
        if cwd is None or same_dir(cwd, ctx.workspace):
            files.append(main)
            files.extend(find(project, glob.escape(main.stem), "subagents", "*.jsonl",
                              refused=refused))
    return files


def first_cwd(path: Path, max_lines: int = 50, limit: int = DEFAULT_MAX_LINE) -> str | None:
    """The ``cwd`` of a transcript's first lines (None if none says)."""
    import orjson

    try:
        with open_regular(path) as f:
            for _ in range(max_lines):
                raw = f.readline(limit + 1)
                if not raw or len(raw) > limit:
                    return None
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("cwd"), str):
                    return str(obj["cwd"])
    except (OSError, Unsafe):
        return None
    return None


def _claude_root(path: Path, ctx: Context) -> Path:
    """The Claude config folder a transcript lives in (for its file-history)."""
    for ancestor in list(path.parents)[:4]:
        if ancestor.name == "projects":
            return ancestor.parent
    return ctx.claude_dir


@dataclass(slots=True)
class _Message:
    """The API message being read: its usage is written once it is complete."""

    id: str
    last_event: str
    ts: str
    usage: JSON
    model: str | None


@dataclass(slots=True)
class _Snapshot:
    message_id: str
    backups: JSON
    ts: str | None
    line: int


class ClaudeCodeParser(HeaderLineParser):
    max_held = MAX_PENDING_LINES

    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.subagent = path.parent.name == "subagents"
        self.base_session: str | None = None  # the sessionId written in the lines
        self.cwd: str | None = None
        self.last_ts = ""
        self.last_event: str | None = None
        self.remap: dict[str, str] = {}  # uuid of a split line -> its last event
        self.message: _Message | None = None
        self.snapshot: _Snapshot | None = None
        self.model: str | None = None
        self.titled = False
        self.history_dir = _claude_root(path, ctx) / "file-history"

    # -- session start -------------------------------------------------

    def is_header(self, obj: JSON) -> bool:
        return isinstance(obj.get("sessionId"), str) and isinstance(obj.get("timestamp"), str)

    def start(self, first: JSON | None) -> Iterator[Record]:
        base = as_str(first.get("sessionId")) if first else None
        base_id = safe_id(base) or safe_id(self.path.stem) or derive_id(self.path.name)
        self.base_session = base_id
        sid = base_id
        extra: JSON = {}
        if self.subagent:
            sid = safe_id(f"{base_id}.{self.path.stem}") or derive_id(base_id, self.path.stem)
            extra["parentSession"] = base_id
            agent_id = as_str(first.get("agentId")) if first else None
            extra["agentId"] = agent_id or self.path.stem.removeprefix("agent-")
        self.session_id = sid
        started = ""
        for obj, _ in self.held:
            ts = as_str(obj.get("timestamp"))
            if ts:
                started = ts
                break
        self.last_ts = started
        src = first or {}
        self.cwd = as_str(src.get("cwd"))
        for key in ("version", "gitBranch", "slug"):
            if isinstance(src.get(key), str) and src[key]:
                extra[key] = src[key]
        yield SessionRecord(
            SessionHeader(
                id=sid,
                agent=AGENT,
                started=started,
                cwd=self.cwd,
                source=AGENT,
                extra=extra,
            )
        )

    def finish(self, final: bool) -> Iterator[Record]:
        yield from super().finish(final)
        if final and self.session_id is not None:
            yield from self._flush_message()
            yield from self._flush_snapshot()

    # -- one line ------------------------------------------------------

    def on_line(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        sid = self.session_id
        assert sid is not None
        ts = as_str(obj.get("timestamp")) or self.last_ts
        self.last_ts = ts
        if self.cwd is None and isinstance(obj.get("cwd"), str):
            self.cwd = obj["cwd"]
        kind = obj.get("type")
        uuid = safe_id(obj.get("uuid"), sid)
        parts: list[tuple[str, JSON]]
        if kind == "user":
            parts = list(self._user(obj))
            prompt = next((d for k, d in parts if k == Kind.PROMPT), None)
            if prompt is not None:
                yield from self._flush_message()  # a new turn: the last answer is complete
                if not self.titled:
                    self.titled = True
                    title = prompt_title(prompt["text"])
                    if title:
                        yield MetaRecord(sid, {"title": title}, TITLE_FIRST_PROMPT)
        elif kind == "assistant":
            yield from self._assistant_start(obj)
            parts = list(self._assistant(obj))
        elif kind == "system":
            if obj.get("subtype") in TURN_END_SUBTYPES:
                yield from self._flush_message()
            parts = [(Kind.NOTE, self._system(obj))]
        else:
            yield from self._side_effects(obj, line)
            parts = [(Kind.RAW, {"type": kind, "raw": obj})]

        if uuid is None:
            first_id = "h" + derive_id(sid, line.data)[1:]
            parent = self.last_event
        else:
            first_id = uuid
            parent = self._parent(obj)
        event_id = first_id
        for i, (ev_kind, data) in enumerate(parts):
            event_id = first_id if i == 0 else sub_id(first_id, i)
            yield EventRecord(Event(event_id, sid, parent, ts, ev_kind, data))
            parent = event_id
        if len(parts) > 1:
            self.remap[first_id] = event_id
            if len(self.remap) > MAX_REMAP:
                # Children follow their parent closely; forgetting the oldest keeps
                # memory bounded (a very late child would hang below the line's first block).
                del self.remap[next(iter(self.remap))]
        self.last_event = event_id
        if kind == "assistant" and self.message is not None:
            self.message.last_event = event_id
            self.message.ts = ts

    def _parent(self, obj: JSON) -> str | None:
        parent = safe_id(obj.get("parentUuid"), self.session_id)
        if parent is None:
            parent = safe_id(obj.get("logicalParentUuid"), self.session_id)
        if parent is None:
            return None
        return self.remap.get(parent, parent)

    # -- user ----------------------------------------------------------

    def _user(self, obj: JSON) -> Iterator[tuple[str, JSON]]:
        message = as_dict(obj.get("message"))
        content = message.get("content")
        blocks: list[Any] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content)
        )
        texts: list[str] = []
        text_at: int | None = None
        out: list[tuple[str, JSON]] = []
        for block in blocks:
            b = as_dict(block)
            btype = b.get("type")
            if btype == "text":
                if text_at is None:
                    text_at = len(out)
                texts.append(as_str(b.get("text")) or "")
            elif btype == "tool_result":
                out.append(
                    (
                        Kind.TOOL_RESULT,
                        {
                            "toolUseId": as_str(b.get("tool_use_id")),
                            "isError": b.get("is_error") is True,
                            "output": _result_text(b.get("content")),
                        },
                    )
                )
            elif btype == "image":
                out.append((Kind.NOTE, {"text": "[image]", "image": True}))
            else:
                out.append((Kind.RAW, {"type": f"user/{btype}", "raw": block}))
        if texts or not out:
            text = "\n\n".join(texts)
            out.insert(text_at if text_at is not None else len(out), self._user_text(obj, text))
        return iter(out)

    def _user_text(self, obj: JSON, text: str) -> tuple[str, JSON]:
        data: JSON = {"text": text}
        if obj.get("isSidechain") is True:
            data["sidechain"] = True
        if obj.get("isMeta") is True:
            data["meta"] = True
            return Kind.NOTE, data
        if obj.get("isCompactSummary") is True:
            data["compactSummary"] = True
            return Kind.NOTE, data
        if obj.get("isVisibleInTranscriptOnly") is True or not is_prompt_text(text):
            return Kind.NOTE, data
        if text.lstrip().startswith(COMPACT_PROMPT_PREFIX):
            data["compactPrompt"] = True
            return Kind.NOTE, data
        if isinstance(obj.get("promptId"), str):
            data["promptId"] = obj["promptId"]
        return Kind.PROMPT, data

    # -- assistant -----------------------------------------------------

    def _assistant_start(self, obj: JSON) -> Iterator[Record]:
        """Close the previous API message when a new one begins."""
        message = as_dict(obj.get("message"))
        mid = as_str(message.get("id")) or as_str(obj.get("uuid")) or ""
        if self.message is not None and self.message.id != mid:
            yield from self._flush_message()
        model = as_str(message.get("model"))
        if self.message is None:
            self.message = _Message(mid, "", self.last_ts, {}, model)
        if isinstance(message.get("usage"), dict):
            self.message.usage = message["usage"]  # the last line's figures win
        if model and model != "<synthetic>" and model != self.model:
            self.model = model
            assert self.session_id is not None
            yield MetaRecord(self.session_id, {"model": model})

    def _assistant(self, obj: JSON) -> Iterator[tuple[str, JSON]]:
        message = as_dict(obj.get("message"))
        mid = as_str(message.get("id"))
        base: JSON = {"messageId": mid} if mid else {}
        if obj.get("isSidechain") is True:
            base["sidechain"] = True
        out: list[tuple[str, JSON]] = []
        for block in as_list(message.get("content")):
            b = as_dict(block)
            btype = b.get("type")
            if btype == "text":
                out.append((Kind.RESPONSE, {"text": as_str(b.get("text")) or "", **base}))
            elif btype == "thinking":
                out.append((Kind.THINKING, {"text": as_str(b.get("thinking")) or "", **base}))
            elif btype == "redacted_thinking":
                out.append((Kind.THINKING, {"text": "", "redacted": True, **base}))
            elif btype == "tool_use":
                out.append(
                    (
                        Kind.TOOL_CALL,
                        {
                            "name": as_str(b.get("name")) or "?",
                            "input": b.get("input"),
                            "toolUseId": as_str(b.get("id")),
                            **base,
                        },
                    )
                )
            else:
                out.append((Kind.RAW, {"type": f"assistant/{btype}", "raw": block, **base}))
        if not out:
            out.append((Kind.RESPONSE, {"text": "", **base}))
        if isinstance(message.get("stop_reason"), str):
            out[-1][1]["stopReason"] = message["stop_reason"]
        if obj.get("isApiErrorMessage") is True:
            out[-1][1]["apiError"] = True
        return iter(out)

    def _flush_message(self) -> Iterator[Record]:
        msg, self.message = self.message, None
        if msg is None or not msg.last_event or self.session_id is None:
            return
        u = msg.usage
        yield EventRecord(
            Event(
                sub_id(msg.last_event, "usage"),
                self.session_id,
                msg.last_event,
                msg.ts,
                Kind.USAGE,
                {
                    "input": as_int(u.get("input_tokens")),
                    "output": as_int(u.get("output_tokens")),
                    "cacheRead": as_int(u.get("cache_read_input_tokens")),
                    "cacheCreation": as_int(u.get("cache_creation_input_tokens")),
                    "messageId": msg.id,
                    "model": msg.model,
                },
            )
        )

    # -- system and the rest -------------------------------------------

    def _system(self, obj: JSON) -> JSON:
        subtype = as_str(obj.get("subtype")) or "system"
        data: JSON = {"text": as_str(obj.get("content")) or subtype, "subtype": subtype}
        for key in ("level", "logicalParentUuid", "compactMetadata", "durationMs"):
            if key in obj:
                data[key] = obj[key]
        if subtype == "compact_boundary":
            data["compactBoundary"] = True
        return data

    def _side_effects(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        """Titles and file-history checkpoints carried by lines outside the tree."""
        sid = self.session_id
        assert sid is not None
        kind = obj.get("type")
        if kind == "summary" and isinstance(obj.get("summary"), str):
            yield MetaRecord(sid, {"title": short_title(obj["summary"], 120)}, TITLE_SUMMARY)
        elif kind == "last-prompt" and isinstance(obj.get("lastPrompt"), str):
            title = prompt_title(obj["lastPrompt"])
            if title:
                yield MetaRecord(sid, {"title": title}, TITLE_LAST_PROMPT)
        elif kind == "file-history-snapshot":
            snap = as_dict(obj.get("snapshot"))
            mid = as_str(snap.get("messageId")) or as_str(obj.get("messageId"))
            if mid:
                if self.snapshot is not None and self.snapshot.message_id != mid:
                    yield from self._flush_snapshot()
                self.snapshot = _Snapshot(
                    mid, as_dict(snap.get("trackedFileBackups")), as_str(snap.get("timestamp")),
                    line.number,
                )

    def _flush_snapshot(self) -> Iterator[Record]:
        snap, self.snapshot = self.snapshot, None
        if snap is None or not snap.backups or self.session_id is None:
            return
        folder = self.history_dir / (self.base_session or self.session_id)
        files: dict[str, bytes | None] = {}
        names: list[str] = []
        for path, info in sorted(snap.backups.items()):
            name = as_dict(info).get("backupFileName")
            rel = workspace_relpath(path, self.cwd, self.ctx.workspace)
            if rel is None:
                yield self.problem(
                    snap.line,
                    f"file-history backup of {path!r} refused: it is outside the workspace "
                    f"{self.ctx.workspace}",
                )
                continue
            if name is None:
                files[rel] = None  # Claude Code's mark for "did not exist yet"
                names.append(f"{rel}=absent")
                continue
            if not isinstance(name, str) or "/" in name or name.startswith("."):
                yield self.problem(snap.line, f"backupFileName {name!r} of {path!r} is not a name")
                continue
            try:
                # Never through a link: a backup (or its folder) linked to ~/.ssh/id_ed25519
                # would otherwise be shown by `show` and written into the workspace by a rewind.
                files[rel] = read_regular(folder / name, self.ctx.max_line,
                                          under=self.history_dir.parent)
            except (Unsafe, InvalidInput) as exc:
                yield self.problem(snap.line, f"file-history backup of {path!r} skipped: "
                                   f"{exc.message}")
                continue
            except OSError:
                continue  # backup not kept on this machine: the checkpoint holds the rest
            names.append(f"{rel}={name}")
        if not names:
            return
        yield CheckpointRecord(
            session_id=self.session_id,
            event_id=safe_id(snap.message_id, self.session_id),
            checkpoint_id="cc" + derive_id(self.session_id, snap.message_id, *names)[2:],
            label="before prompt (Claude Code file history)",
            ts=snap.ts,
            files=files,
        )


def _result_text(content: Any) -> Any:
    """A tool result's content as text when it is text blocks; other shapes as they are."""
    if isinstance(content, str) or content is None:
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for block in content:
            b = as_dict(block)
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                texts.append(b["text"])
            elif b.get("type") == "image":
                texts.append("[image]")
            else:
                return content
        return "\n".join(texts)
    return content
