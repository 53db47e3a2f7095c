"""Tell which tool wrote a file, from its first bytes, so an importer can refuse another's.

A Codex rollout is valid JSON Lines: given to ``claude-code`` it would become
thousands of ``raw`` events and a session nobody asked for. ``looks_like`` reads
at most ``SNIFF_BYTES`` of the file and names the source whose shape it has
(None when it cannot tell: an empty file, or text of no known shape).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ..errors import Unsafe
from ..events import JSON
from .inputs import open_regular
from .sqlite_input import SQLITE_MAGIC

SNIFF_BYTES = 256 << 10
SNIFF_LINES = 20

CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                         "compacted"})
CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                          "queue-operation", "last-prompt", "progress"})


def _type(o: JSON) -> str | None:
    t = o.get("type")
    return t if isinstance(t, str) else None


def _codex(o: JSON) -> bool:
    return _type(o) in CODEX_TYPES and "payload" in o


def _claude(o: JSON) -> bool:
    return (_type(o) in CLAUDE_TYPES
            and any(k in o for k in ("uuid", "sessionId", "leafUuid", "snapshot", "messageId",
                                     "parentUuid", "operation", "lastPrompt")))


def _gemini(o: JSON) -> bool:
    return (isinstance(o.get("projectHash"), str) or "$set" in o or "$rewindTo" in o
            or (_type(o) in ("user", "gemini", "info", "error", "warning")
                and "content" in o and "uuid" not in o))


def _copilot(o: JSON) -> bool:
    return isinstance(o.get("timeline"), list) and "sessionId" in o


def _copilot_chat(o: JSON) -> bool:
    return isinstance(o.get("requests"), list) and ("requesterUsername" in o or "version" in o)


def _continue(o: JSON) -> bool:
    return isinstance(o.get("history"), list) and "sessionId" in o


def _opencode(o: JSON) -> bool:
    return isinstance(o.get("id"), str) and o["id"].startswith("ses_") and "directory" in o


def _ralph(o: JSON) -> bool:
    return isinstance(o.get("type"), dict) and "kind" in o["type"]


def _event_records(o: JSON) -> bool:
    return "session_id" in o and "event" in o and "parent_id" in o


def _meta(o: JSON) -> bool:
    return isinstance(o.get("meta"), dict) or ("role" in o and "content" in o and "type" not in o)


def _snapshot(o: JSON) -> bool:
    return "messages" in o and "pinned" in o


def _turnback(o: JSON) -> bool:
    return (o.get("type") == "session" and "format" in o) or {"id", "session", "kind"} <= set(o)


def _checkpoint(o: JSON) -> bool:
    return any(k in o for k in ("user_prompts", "assistant_responses", "file_diffs"))


def _cline_list(v: list[Any]) -> bool:
    first = v[0] if v and isinstance(v[0], dict) else {}
    return "ts" in first and ("say" in first or "ask" in first)


# (source, test of one JSON object), most specific first
OBJECT_TESTS: tuple[tuple[str, Callable[[JSON], bool]], ...] = (
    ("codex", _codex),
    ("copilot-cli", _copilot),
    ("copilot-chat", _copilot_chat),
    ("continue", _continue),
    ("opencode", _opencode),
    ("gemini-cli", _gemini),
    ("claude-code", _claude),
    ("ralph", _ralph),
    ("event-records", _event_records),
    ("turnback", _turnback),
    ("snapshot-json", _snapshot),
    ("checkpoint-json", _checkpoint),
    ("meta-jsonl", _meta),
)

LABELS = {
    "codex": "a Codex rollout", "claude-code": "a Claude Code transcript",
    "gemini-cli": "a Gemini CLI chat", "copilot-cli": "a GitHub Copilot CLI session",
    "cline": "a Cline task's ui_messages.json", "crush": "an SQLite database (Crush / OpenCode)",
    "aider": "an aider chat history", "ralph": "a loop history (seed 000)",
    "event-records": "an event-record session (seed 002)", "meta-jsonl": "a meta JSONL (seed 003)",
    "snapshot-json": "a conversation snapshot (seed 004)", "turnback": "a Turnback JSONL export",
    "checkpoint-json": "a checkpoint JSON (seed 001)",
    "copilot-chat": "a Copilot Chat session", "continue": "a Continue session",
    "opencode": "an OpenCode session file",
}

# Sources that read the same files as another (a fork, or one parser for two tools).
FAMILIES = (
    frozenset({"gemini-cli", "qwen-code"}),
    frozenset({"cline", "roo-code", "kilo-code"}),
    frozenset({"crush", "opencode-go"}),
)


def same_family(a: str, b: str) -> bool:
    return a == b or any(a in f and b in f for f in FAMILIES)


def looks_like(path: Path) -> str | None:
    """The source whose files look like ``path``'s first bytes, or None."""
    try:
        with open_regular(path) as f:
            head = f.read(SNIFF_BYTES)
    except (OSError, Unsafe):
        return None
    if head.startswith(SQLITE_MAGIC):
        return "crush"
    text = head.lstrip()
    if text.startswith(b"# aider chat started at"):
        return "aider"
    if text[:1] not in (b"{", b"["):
        return None
    try:
        whole = orjson.loads(head)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        return "cline" if _cline_list(whole) else None
    if whole is None and text[:1] == b"[":  # a list longer than the bytes read
        return "cline" if _CLINE_HEAD.match(text) else None
    if whole is None and text[:1] == b"{" and b"\n" not in text.rstrip()[:4096]:
        return next((name for key, name in _LONG_DOCS if key in text[:4096]), None)
    objects = [whole] if isinstance(whole, dict) else _lines(head)
    for name, test in OBJECT_TESTS:
        if any(test(o) for o in objects):
            return name
    return None


_CLINE_HEAD = re.compile(rb'\[\s*\{\s*"ts"\s*:\s*\d+\s*,\s*"type"\s*:\s*"(?:say|ask)"')
# keys that name a whole-document format in its first bytes (one-line documents)
_LONG_DOCS = ((b'"projectHash"', "gemini-cli"), (b'"timeline"', "copilot-cli"))


def _lines(head: bytes) -> list[JSON]:
    out = []
    for line in head.split(b"\n")[:SNIFF_LINES]:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out
