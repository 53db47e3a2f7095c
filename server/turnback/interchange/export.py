"""Export a session: Turnback JSONL (imports back identical) or a Markdown transcript.

The JSONL is the store's own session-file shape — the header (with its title
and end folded in, and the current head) then one line per event — so
``turnback import turnback FILE`` recreates the session, ids, tree and all.
The Markdown is for reading: prompts, answers, thinking, tool calls and
their results in the order they were recorded, with the session's stats.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

import orjson

from ..events import JSON, Event, Kind
from ..fs.jsonl import bounded, dumps
from ..store.facade import Store

FORMAT = 1
OUTPUT_LINES = 60  # a tool result longer than this is cut in the Markdown


def export_jsonl(store: Store, session_id: str, out: IO[bytes]) -> int:
    """Write the session as Turnback JSONL; return the number of events written."""
    log = store.session(session_id)
    header: JSON = {"type": "session", "format": FORMAT, **log.header.to_json(), "head": log.head}
    out.write(dumps(header) + b"\n")
    for event in log.events:
        # as the store writes a line: a name that is not UTF-8, data nested past the bound
        out.write(dumps(event.to_json()) + b"\n")
    return len(log.events)


def export_markdown(store: Store, session_id: str, out: IO[str],
                    output_lines: int = OUTPUT_LINES) -> int:
    """Write a readable transcript; return the number of events shown."""
    summary = store.session_summary(session_id)
    log = store.session(session_id)
    h = log.header
    s = summary.stats
    tokens = s.get("tokens") or {}
    out.write(f"# {_inline(h.title) or 'Session ' + h.id}\n\n")
    rows = [
        ("Session", f"`{h.id}`"),
        ("Agent", h.agent + (f" ({h.model})" if h.model else "")),
        ("Source", h.source),
        ("Folder", f"`{h.cwd}`" if h.cwd else "—"),
        ("Started", s.get("startedAt") or h.started or "—"),
        ("Ended", s.get("endedAt") or h.ended or "—"),
        ("Prompts / responses", f"{s.get('prompts', 0)} / {s.get('responses', 0)}"),
        ("Tool calls", f"{s.get('toolCalls', 0)} ({s.get('toolCallsFailed', 0)} failed)"),
        ("Tokens in / out",
         f"{tokens.get('input', 0)} / {tokens.get('output', 0)} "
         f"(cache read {tokens.get('cacheRead', 0)}, written {tokens.get('cacheCreation', 0)})"),
        ("Checkpoints", str(s.get("checkpoints", 0))),
    ]
    out.write("| | |\n|---|---|\n")
    for name, value in rows:
        out.write(f"| {name} | {_cell(value)} |\n")
    out.write("\n---\n")
    shown = hidden = 0
    previous: str | None = None
    for event in log.events:
        text = _render(event, previous, output_lines)
        if text is None:
            hidden += 1
        else:
            out.write("\n" + text)
            shown += 1
        previous = event.id
    if hidden:
        out.write(f"\n---\n\n*{hidden} events not shown (usage figures and raw source lines; "
                  "the JSONL export has everything).*\n")
    return shown


def _render(e: Event, previous: str | None, output_lines: int) -> str | None:
    d = e.data
    raw_text = d.get("text")
    text = raw_text if isinstance(raw_text, str) else ""
    when = e.ts[:19].replace("T", " ") if e.ts else ""
    branch = ""
    if e.parent is not None and e.parent != previous and e.kind == Kind.PROMPT:
        branch = f"*(continues from event `{e.parent}`: a branch)*\n\n"
    if e.kind == Kind.PROMPT:
        return f"## Prompt · {when}\n\n{branch}{_quote_block(text)}\n"
    if e.kind == Kind.RESPONSE:
        return f"**Assistant** · {when}\n\n{text}\n" if text.strip() else None
    if e.kind == Kind.THINKING:
        if not text.strip():
            return None
        return f"<details><summary>Thinking</summary>\n\n{text}\n\n</details>\n"
    if e.kind == Kind.TOOL_CALL:
        name = d.get("name") or "?"
        body = _fence(_pretty(d.get("input")), "json")
        return f"**Tool call** `{name}` · {when}\n\n{body}\n"
    if e.kind == Kind.TOOL_RESULT:
        label = "**Result (error)**" if d.get("isError") is True else "**Result**"
        return f"{label}\n\n{_fence(_cut(_plain(d.get('output')), output_lines))}\n"
    if e.kind == Kind.CHECKPOINT:
        return f"> Checkpoint `{d.get('checkpoint')}` — {d.get('label', '')}\n"
    if e.kind in (Kind.USAGE, Kind.RAW):
        return None
    if e.kind == Kind.NOTE:
        return f"> *{_inline(text)[:300]}*\n" if text.strip() else None
    summary = text or ", ".join(f"{k}: {v}" for k, v in d.items() if isinstance(v, (str, int)))
    return f"*{e.kind.replace('_', ' ')}* — {_inline(summary)[:300]}\n"


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # nested past what orjson writes (a store from before the bound)
        return json.dumps(bounded(value), indent=2)


def _plain(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else _pretty(value)


def _cut(text: str, lines: int) -> str:
    parts = text.splitlines()
    if len(parts) <= lines:
        return text
    return "\n".join(parts[:lines]) + f"\n… ({len(parts) - lines} more lines)"


def _fence(text: str, lang: str = "") -> str:
    """A code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _quote_block(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines()) or ">"


def _inline(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return _inline(text).replace("|", "\\|")
