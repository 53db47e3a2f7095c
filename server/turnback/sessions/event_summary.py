"""An event in one line for people: the summary a turn's step, a session's row and an
undo's words start from, and the test runners' progress marks a result's line skips. (Not
a session's listing summary: that is ``files.py``'s summary index.)

Display, not the event model (``events.py``): the model's readers (importers, the store's
writes, sharing) never need it, so it sits beside its users, ``turns.py`` and the store's
``safety_names``.
"""

from __future__ import annotations

import re

from ..events import Event, Kind

# a line of a test runner's progress marks: pytest's "..F.s" with or without its
# "[ 40%]", unittest's "....E" (at least two marks, or one with its percentage)
_PROGRESS = re.compile(r"[.FEsxX]{2,}(?:\s*\[\s*\d{1,3}%\])?|[.FEsxX]\s*\[\s*\d{1,3}%\]")


def is_progress(line: str) -> bool:
    """Whether ``line`` holds only a test runner's progress marks."""
    return _PROGRESS.fullmatch(line.strip()) is not None


def without_progress(output: str) -> str:
    """A tool's output without the lines that are only progress marks (pytest's dots),
    which said nothing in a one-line summary; the output as it is when nothing else is
    left. Reads the first 64 KiB: a summary shows its start."""
    head = output[:65536]
    kept = [line for line in head.splitlines() if not is_progress(line)]
    return "\n".join(kept) if any(line.strip() for line in kept) else output


def summarize(event: Event, width: int = 120) -> str:
    """A one-line human summary of an event for trees and lists."""
    d = event.data
    text = ""
    for key in ("text", "summary", "label", "name", "prompt", "reason", "message", "topic",
                "output", "signal", "commit"):
        v = d.get(key)
        if isinstance(v, str) and v.strip():
            text = v
            break
    if event.kind == Kind.TOOL_CALL and isinstance(d.get("name"), str):
        arg = d.get("input")
        hint = ""
        if isinstance(arg, dict):
            for key in ("command", "file_path", "path", "pattern", "description"):
                if isinstance(arg.get(key), str):
                    hint = arg[key]
                    break
        text = f"{d['name']}({hint})" if hint else d["name"]
    elif event.kind == Kind.USAGE:
        text = f"in {d.get('input', 0)} / out {d.get('output', 0)} tokens"
    elif event.kind == Kind.ITERATION_STARTED or event.kind == Kind.ITERATION_COMPLETED:
        text = f"iteration {d.get('iteration', '?')}" + (
            "" if d.get("success", True) else " (failed)"
        )
    elif event.kind == Kind.REWIND and d.get("undo"):
        # an undo goes back to the safety checkpoint of what it undoes: "rewind to" that
        # checkpoint's id named nothing a person had asked for
        text = f"undo ({d.get('mode', 'files')})"
    elif event.kind == Kind.REWIND:
        text = f"rewind to {d.get('checkpoint', '?')} ({d.get('mode', 'files')})"
    elif event.kind == Kind.TOOL_RESULT and text and text == d.get("output"):
        text = without_progress(text)
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text
