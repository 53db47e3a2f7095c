"""Gemini CLI (and its fork Qwen Code) chat recordings.

Where: ``~/.gemini/tmp/<project>/chats/`` — ``<project>`` is the SHA-256 of the
project root (older versions) or the short name ``~/.gemini/projects.json`` maps
the root to (newer ones); sub-agents' chats sit in ``chats/<parent session>/``.
Qwen Code keeps the same files under ``~/.qwen/tmp/<hash>/chats/``.

Two shapes, read as Gemini CLI's own reader (``chatRecordingService.ts``) does:

- ``session-*.json``: one ``ConversationRecord`` — ``{sessionId, projectHash,
  startTime, lastUpdated, messages: [...], summary?}``;
- ``session-*.jsonl`` (newer): a first line with the metadata, then one line
  per message *written again whenever it changes* (the last line with an id
  wins), ``{"$set": {...}}`` metadata updates (``messages`` in a ``$set``
  replaces them all), and ``{"$rewindTo": id}`` which drops that message and
  every later one.

Either way the file is replayed to its messages, then mapped — user → ``prompt``,
gemini → ``thinking`` per thought, ``response``, ``tool_call`` per tool call and
its ``tool_result`` once the call's status is final, ``usage`` from ``tokens``;
info / warning / error → ``note``. Ids derive from the message ids, so a
re-import adds what is new; a message rewound away stays in the tree as the
branch it was, and what follows the rewind hangs below the message before it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...errors import InvalidInput, Unsafe
from ...events import JSON, Kind, SessionHeader
from ...models import Problem
from ..base import (
    TITLE_FIRST_PROMPT,
    TITLE_SUMMARY,
    Context,
    DocumentParser,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_int,
    as_list,
    as_str,
    derive_id,
    norm_ts,
    safe_id,
    short_title,
    sub_id,
    unreadable,
)
from ..chain import Chain
from ..inputs import find, read_regular

FINAL_STATUSES = frozenset({"success", "error", "cancelled"})
MAX_MESSAGES = 200_000  # a replay holds at most this many messages


def project_hash(root: Path) -> str:
    """Gemini CLI's ``getProjectHash``: SHA-256 of the project root as text."""
    return hashlib.sha256(str(root).encode()).hexdigest()


def _folders(home: Path, workspace: Path, limit: int) -> list[Path]:
    """The project folders of ``workspace`` under ``home/tmp``: hash-named and slug-named."""
    tmp = home / "tmp"
    out = [tmp / project_hash(workspace)]
    try:
        registry = orjson.loads(read_regular(home / "projects.json", min(limit, 4 << 20)))
    except (OSError, Unsafe, InvalidInput, orjson.JSONDecodeError):
        registry = {}
    slug = as_dict(as_dict(registry).get("projects")).get(str(workspace))
    if isinstance(slug, str) and slug and "/" not in slug and not slug.startswith("."):
        out.append(tmp / slug)
    return out


def chat_files(folder: Path, refused: list[Problem]) -> list[Path]:
    return (find(folder, "session-*.json", refused=refused)
            + find(folder, "session-*.jsonl", refused=refused)
            + find(folder, "*", "*.jsonl", refused=refused))


def make_locate(env_var: str, dirname: str) -> Any:
    def locate(ctx: Context, path: Path | None) -> list[Path]:
        """PATH (a chat file or a folder of them), or this workspace's chats."""
        if path is not None:
            return chat_files(path, ctx.refused) if path.is_dir() else [path]
        found: list[Path] = []
        for folder in chat_folders(ctx, env_var, dirname):
            found.extend(chat_files(folder, ctx.refused))
        return found
    return locate


def chat_folders(ctx: Context, env_var: str, dirname: str) -> list[Path]:
    """The ``chats`` folders of this workspace (they need not exist yet)."""
    home = gemini_home(ctx, env_var, dirname)
    return [folder / "chats" for folder in _folders(home, ctx.workspace, ctx.max_line)]


def gemini_home(ctx: Context, env_var: str, dirname: str) -> Path:
    """``~/.gemini`` (or ``~/.qwen``), unless the tool's variable moves it."""
    override = ctx.env.get(env_var)
    return Path(override) if override else ctx.home / dirname


locate_gemini = make_locate("GEMINI_CLI_HOME_DIR", ".gemini")
locate_qwen = make_locate("QWEN_HOME_DIR", ".qwen")


def parts_text(content: Any) -> str:
    """The text of a ``PartListUnion`` (a string, a part, or a list of them)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    texts = [p["text"] for p in as_list(content) if isinstance(as_dict(p).get("text"), str)]
    return "".join(texts)


def _result_output(result: Any) -> Any:
    """A tool result's output: the functionResponse's ``output`` (or ``error``) text."""
    for part in as_list(result) if not isinstance(result, dict) else [result]:
        response = as_dict(as_dict(as_dict(part).get("functionResponse")).get("response"))
        for key in ("output", "error", "content"):
            if key in response:
                return response[key]
    return parts_text(result) if result is not None else None


class Replay:
    """The messages and metadata a chat file holds, replayed as Gemini CLI reads it."""

    def __init__(self) -> None:
        self.meta: JSON = {}
        self.messages: dict[str, JSON] = {}
        self.problems: list[str] = []

    def record(self, rec: Any) -> None:
        if not isinstance(rec, dict):
            self.problems.append(f"expected a JSON object, found {type(rec).__name__}")
            return
        if isinstance(rec.get("$rewindTo"), str):
            ids = list(self.messages)
            if rec["$rewindTo"] in self.messages:
                for mid in ids[ids.index(rec["$rewindTo"]):]:
                    del self.messages[mid]
            else:
                self.messages.clear()
        elif isinstance(rec.get("id"), str):
            self._message(rec)
        elif isinstance(rec.get("$set"), dict):
            update = rec["$set"]
            if isinstance(update.get("messages"), list):
                self.messages.clear()
                for msg in update["messages"]:
                    if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                        self._message(msg)
            self.meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(rec.get("sessionId"), str):
            self.meta.update({k: v for k, v in rec.items() if k != "messages"})
            for msg in as_list(rec.get("messages")):
                if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                    self._message(msg)
        else:
            self.problems.append("a line that is neither a message, metadata, $set nor $rewindTo")

    def _message(self, msg: JSON) -> None:
        mid = msg["id"]
        if mid in self.messages:
            self.messages[mid] = msg  # the record written last wins, where it was
        elif len(self.messages) < MAX_MESSAGES:
            self.messages[mid] = msg
        else:
            self.problems.append(f"more than {MAX_MESSAGES} messages; the rest skipped")


class GeminiParser(DocumentParser):
    agent = "gemini-cli"

    def parse(self) -> Iterator[Record]:
        try:
            data = read_regular(self.path, self.ctx.max_line)
        except (InvalidInput, Unsafe, OSError) as exc:
            yield unreadable(self.path, exc)
            return
        replay = Replay()
        try:
            whole = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if self.path.suffix == ".json":  # one document (a cut one is one problem)
                yield self.problem(f"not valid JSON ({exc}); file skipped")
                return
            whole = None
        if isinstance(whole, dict):
            replay.record(whole)
        else:
            lines = data.split(b"\n")
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    replay.record(orjson.loads(line))
                except orjson.JSONDecodeError as exc:
                    if number == len(lines):  # no newline after it: still being written
                        yield self.problem("line is cut off (the file ends mid-line); it is "
                                           "imported once whole", number)
                    else:
                        yield self.problem(f"not valid JSON ({exc}); line skipped", number)
                    continue
                for message in replay.problems:
                    yield self.problem(f"{message}; skipped", number)
                replay.problems.clear()
        for message in replay.problems:
            yield self.problem(message)
        yield from self._records(replay)

    def _records(self, replay: Replay) -> Iterator[Record]:
        meta = replay.meta
        sid = safe_id(meta.get("sessionId")) or derive_id(self.path.name)
        started = norm_ts(meta.get("startTime")) or ""
        extra: JSON = {}
        for key in ("projectHash", "kind"):
            if isinstance(meta.get(key), str):
                extra[key] = meta[key]
        if self.path.parent.name != "chats" and self.path.parent.parent.name == "chats":
            extra["parentSession"] = self.path.parent.name
        yield SessionRecord(SessionHeader(id=sid, agent=self.agent, started=started,
                                          source=self.agent, extra=extra))
        if isinstance(meta.get("summary"), str) and meta["summary"].strip():
            yield MetaRecord(sid, {"title": short_title(meta["summary"], 120)}, TITLE_SUMMARY)
        chain = Chain(sid, started)
        titled = False
        model: str | None = None
        for mid, msg in replay.messages.items():
            base = safe_id(mid, sid) or derive_id(sid, mid)
            ts = norm_ts(msg.get("timestamp")) or chain.ts
            kind = msg.get("type")
            text = parts_text(msg.get("content"))
            if kind == "user":
                if not titled and short_title(text):
                    titled = True
                    yield MetaRecord(sid, {"title": short_title(text)}, TITLE_FIRST_PROMPT)
                yield chain.add(base, Kind.PROMPT, {"text": text}, ts)
            elif kind == "gemini":
                m = as_str(msg.get("model"))
                if m and m != model:
                    model = m
                    yield MetaRecord(sid, {"model": m})
                yield from self._gemini(chain, base, msg, text, ts)
            else:
                level = as_str(kind) or "message"
                yield chain.add(base, Kind.NOTE, {"text": text, "level": level}, ts)

    def _gemini(self, chain: Chain, base: str, msg: JSON, text: str, ts: str) -> Iterator[Record]:
        first = True

        def eid(suffix: str) -> str:
            nonlocal first
            if first:
                first = False
                return base
            return sub_id(base, suffix)

        for i, thought in enumerate(as_list(msg.get("thoughts"))):
            t = as_dict(thought)
            subject = as_str(t.get("subject")) or ""
            body = as_str(t.get("description")) or ""
            yield chain.add(eid(f"t{i}"), Kind.THINKING,
                            {"text": f"{subject}\n{body}".strip(), "messageId": msg["id"]}, ts)
        if text.strip():
            yield chain.add(eid("text"), Kind.RESPONSE, {"text": text, "messageId": msg["id"]}, ts)
        for call in as_list(msg.get("toolCalls")):
            c = as_dict(call)
            cid = as_str(c.get("id")) or derive_id(base, orjson.dumps(c.get("args")))
            call_ts = norm_ts(c.get("timestamp")) or ts
            yield chain.add(eid(f"call-{cid}"), Kind.TOOL_CALL, {
                "name": as_str(c.get("name")) or "?", "input": c.get("args"), "toolUseId": cid,
                "messageId": msg["id"]}, call_ts)
            status = c.get("status")
            if status in FINAL_STATUSES:
                yield chain.add(eid(f"result-{cid}"), Kind.TOOL_RESULT, {
                    "toolUseId": cid, "isError": status != "success", "status": status,
                    "output": _result_output(c.get("result"))}, call_ts)
        tokens = as_dict(msg.get("tokens"))
        if tokens:
            cached = as_int(tokens.get("cached"))
            yield chain.add(eid("usage"), Kind.USAGE, {
                # Gemini's input (promptTokenCount) includes the cached tokens.
                "input": max(0, as_int(tokens.get("input")) - cached),
                "output": as_int(tokens.get("output")),
                "cacheRead": cached, "cacheCreation": 0,
                "reasoning": as_int(tokens.get("thoughts")),
                "messageId": msg["id"], "model": msg.get("model")}, ts)
        if first:  # a message with nothing in it still marks its place
            yield chain.add(base, Kind.RESPONSE, {"text": "", "messageId": msg["id"]}, ts)


class QwenParser(GeminiParser):
    agent = "qwen-code"

