"""Session stats, counted from the events (so imported and recorded sessions count alike).

The accumulator is incremental — ``add`` one event at a time — and its state is
plain JSON, so the session index can resume counting where a file last ended.
"""

from __future__ import annotations

from typing import Any

from ..events import Event, Kind, parse_iso
from .edited import edited_paths

TOKEN_KEYS = ("input", "output", "cacheRead", "cacheCreation")
# Distinct edited paths remembered per session (the state is kept in the index);
# past this, further new paths are counted without being remembered.
MAX_EDITED = 10_000


class StatsAccumulator:
    def __init__(self, state: dict[str, Any] | None = None) -> None:
        s = state or {}
        if state is not None:
            if "edited" not in state:
                raise KeyError("edited")  # a state of an earlier version: the caller counts again
            _check_state(state)  # read from disk (index/acc/): input like any file
        self.c: dict[str, int] = dict(s.get("c") or {})
        saved = s.get("tokens") or {}
        self.tokens: dict[str, int] = {k: int(saved.get(k, 0)) for k in TOKEN_KEYS}
        # usage keyed by message id: a message's usage counts once, its last figure
        self.by_message: dict[str, list[int]] = dict(s.get("byMessage") or {})
        self.responded: set[str] = set(s.get("responded") or [])
        self.first: str | None = s.get("first")
        self.last: str | None = s.get("last")
        self.ended: str | None = s.get("ended")
        self.completion: str | None = s.get("completion")
        self.termination: str | None = s.get("termination")
        self.merge: dict[str, Any] | None = s.get("merge")
        self.events: int = int(s.get("events", 0))
        self.edited: set[str] = set(s.get("edited") or [])
        self.edited_over: int = int(s.get("editedOver", 0))

    def state(self) -> dict[str, Any]:
        return {
            "c": self.c,
            "tokens": self.tokens,
            "byMessage": self.by_message,
            "responded": sorted(self.responded),
            "first": self.first,
            "last": self.last,
            "ended": self.ended,
            "completion": self.completion,
            "termination": self.termination,
            "merge": self.merge,
            "events": self.events,
            "edited": sorted(self.edited),
            "editedOver": self.edited_over,
        }

    def _inc(self, key: str, n: int = 1) -> None:
        self.c[key] = self.c.get(key, 0) + n

    def add(self, e: Event) -> None:
        self.events += 1
        if self.first is None or e.ts < self.first:
            self.first = e.ts
        if self.last is None or e.ts > self.last:
            self.last = e.ts
        d = e.data
        k = e.kind
        if k == Kind.PROMPT or k == Kind.LOOP_STARTED:
            self._inc("prompts")
        elif k == Kind.RESPONSE:
            # one model message may arrive as several response events (one per text
            # part): it is one response
            mid = d.get("messageId")
            if isinstance(mid, str) and mid:
                if mid not in self.responded:
                    self.responded.add(mid)
                    self._inc("responses")
            else:
                self._inc("responses")
        elif k == Kind.TOOL_CALL:
            self._inc("toolCalls")
            for path in edited_paths(d):
                if path in self.edited:
                    continue
                if len(self.edited) < MAX_EDITED:
                    self.edited.add(path)
                else:
                    self.edited_over += 1
        elif k == Kind.TOOL_RESULT:
            self._inc("toolResults")
            if d.get("isError") is True:
                self._inc("toolCallsFailed")
        elif k == Kind.ITERATION_COMPLETED:
            self._inc("iterations")
            if d.get("success") is False:
                self._inc("iterationsFailed")
        elif k == Kind.EVENT_PUBLISHED:
            self._inc("eventsPublished")
        elif k == Kind.CHECKPOINT:
            self._inc("checkpoints")
        elif k == Kind.REWIND:
            self._inc("rewinds")
        elif k == Kind.USAGE:
            figures = [_int(d.get(key)) for key in TOKEN_KEYS]
            mid = d.get("messageId")
            if isinstance(mid, str) and mid:
                self.by_message[mid] = figures
            else:
                for key, v in zip(TOKEN_KEYS, figures, strict=True):
                    self.tokens[key] += v
        elif k == Kind.LOOP_COMPLETED:
            self.completion = str(d.get("reason") or "completed")
            self.ended = e.ts
        elif k == Kind.LOOP_TERMINATED:
            self.termination = str(d.get("signal") or "terminated")
            self.ended = e.ts
        elif k == Kind.MERGE_COMPLETED:
            self.merge = {"status": "completed", "commit": d.get("commit")}
        elif k == Kind.MERGE_FAILED:
            self.merge = {"status": "failed", "reason": d.get("reason")}

    def result(self, header_started: str = "", header_ended: str | None = None) -> dict[str, Any]:
        tokens = dict(self.tokens)
        for figures in self.by_message.values():
            for key, v in zip(TOKEN_KEYS, figures, strict=True):
                tokens[key] += v
        started = self.first or header_started or None
        ended = header_ended or self.ended or self.last
        duration = 0
        a, b = parse_iso(started or ""), parse_iso(ended or "")
        if a is not None and b is not None and b >= a:
            duration = int((b - a) * 1000)
        out: dict[str, Any] = {
            key: self.c.get(key, 0)
            for key in (
                "prompts", "responses", "toolCalls", "toolCallsFailed", "toolResults",
                "iterations", "iterationsFailed", "eventsPublished", "checkpoints", "rewinds",
            )
        }
        out.update(
            tokens=tokens,
            durationMs=duration,
            startedAt=started,
            endedAt=ended,
            completion=self.completion,
            termination=self.termination,
            merge=self.merge,
            events=self.events,
            filesEdited=len(self.edited) + self.edited_over,
        )
        return out


def _is_int(v: object) -> bool:
    return type(v) is int


def _opt_str(v: object) -> bool:
    return v is None or type(v) is str


def _check_state(s: dict[str, Any]) -> None:
    """Raise ValueError, naming the field, if a saved state is not what ``state`` writes:
    one counted on from it must not fail at its first event, nor show a planted value."""
    c, tokens, by_message = s.get("c") or {}, s.get("tokens") or {}, s.get("byMessage") or {}
    if not (isinstance(c, dict) and all(_is_int(v) for v in c.values())):
        raise ValueError("accumulator field 'c' must map names to integers")
    if not (isinstance(tokens, dict) and all(_is_int(tokens.get(k, 0)) for k in TOKEN_KEYS)):
        raise ValueError("accumulator field 'tokens' must hold integers")
    if not (isinstance(by_message, dict) and all(
            isinstance(v, list) and len(v) == len(TOKEN_KEYS) and all(_is_int(x) for x in v)
            for v in by_message.values())):
        raise ValueError("accumulator field 'byMessage' must map ids to token figures")
    for key in ("responded", "edited"):
        v = s.get(key) or []
        if not (isinstance(v, list) and all(type(x) is str for x in v)):
            raise ValueError(f"accumulator field {key!r} must be a list of strings")
    for key in ("first", "last", "ended", "completion", "termination"):
        if not _opt_str(s.get(key)):
            raise ValueError(f"accumulator field {key!r} must be a string or null")
    if not (s.get("merge") is None or isinstance(s.get("merge"), dict)):
        raise ValueError("accumulator field 'merge' must be an object or null")
    for key in ("events", "editedOver"):
        if not _is_int(s.get(key, 0)):
            raise ValueError(f"accumulator field {key!r} must be an integer")


COUNTERS = ("prompts", "responses", "toolCalls", "toolCallsFailed", "toolResults", "iterations",
            "iterationsFailed", "eventsPublished", "checkpoints", "rewinds", "durationMs",
            "events", "filesEdited")


def stats_ok(stats: dict[str, Any]) -> bool:
    """Whether ``stats`` (read from the summary index) has what ``result`` gives every
    reader: integer counters and tokens, and the times as strings or null."""
    tokens = stats.get("tokens")
    return (
        all(type(stats.get(k)) is int for k in COUNTERS)
        and isinstance(tokens, dict) and all(type(tokens.get(k)) is int for k in TOKEN_KEYS)
        and _opt_str(stats.get("startedAt")) and _opt_str(stats.get("endedAt"))
    )


def _int(v: object) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def compute(events: list[Event], started: str = "", ended: str | None = None) -> dict[str, Any]:
    acc = StatsAccumulator()
    for e in events:
        acc.add(e)
    return acc.result(started, ended)
