"""Checkpoint JSON files with file diffs (seed 001: ``<checkpoint dir>/<id>.json``).

A checkpoint file holds the whole history so far (``user_prompts``,
``assistant_responses``, ``tool_calls``), session stats, and ``file_diffs``
— the files changed since the previous checkpoint, each with its
``before`` and ``after`` text and an absolute ``path``.

A folder of checkpoint files is one session. Read oldest first, each
checkpoint adds the history items beyond the previous one's: prompts and
responses interleaved by index, and the new tool calls (call + result) just
before the last new response (the seed keeps no order between its lists).
Each checkpoint's diffs become a pair of partial Turnback checkpoints: the
``before`` contents tied to the step's first event, the ``after`` contents to
its last. Paths outside the workspace are refused and reported.

Ids derive from the list positions, so importing again, or a folder with one
more checkpoint, adds only what is new.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...events import JSON, Event, Kind, SessionHeader
from ...models import Problem
from ..base import (
    TITLE_FIRST_PROMPT,
    CheckpointRecord,
    Context,
    DocumentParser,
    EventRecord,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_list,
    as_str,
    derive_id,
    iso_from_epoch,
    safe_id,
    short_title,
    workspace_relpath,
)
from ..given_path import required
from ..inputs import find

AGENT = "checkpoint-json"


def locate(ctx: Context, path: Path | None) -> list[Path]:
    # a folder is one session (its checkpoint files): the parser lists it
    return [required(AGENT, path, "a checkpoint .json file or their folder")]


def system_time(value: Any) -> str | None:
    """serde's ``SystemTime`` (``{secs_since_epoch, nanos_since_epoch}``) as ISO 8601."""
    v = as_dict(value)
    secs = v.get("secs_since_epoch")
    if not isinstance(secs, int) or isinstance(secs, bool):
        return None
    nanos = v.get("nanos_since_epoch")
    frac = nanos / 1e9 if isinstance(nanos, int) and not isinstance(nanos, bool) else 0.0
    return iso_from_epoch(secs + frac) or None


class CheckpointJsonParser(DocumentParser):
    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.session_id = ""
        self.last_event: str | None = None
        self.counts = {"p": 0, "r": 0, "t": 0}
        self.prev_ts = ""  # the time of the state "before" a checkpoint's changes

    def parse(self) -> Iterator[Record]:
        refused: list[Problem] = []
        files = find(self.path, "*.json", refused=refused) if self.path.is_dir() else [self.path]
        yield from refused
        docs: list[tuple[str, str, Path]] = []  # (time, id, file): order without keeping docs
        for f in files:
            doc = self.load(f)
            if isinstance(doc, Problem):
                yield doc
                continue
            ts = system_time(doc.get("timestamp")) or ""
            docs.append((ts, str(doc.get("id") or f.stem), f))
        docs.sort()
        for i, (ts, cid, f) in enumerate(docs):
            doc = self.load(f)
            if isinstance(doc, Problem):
                yield doc
                continue
            if i == 0:
                yield from self._start(doc, cid, ts)
            try:
                yield from self._checkpoint(doc, cid, ts, f)
            except (TypeError, ValueError, AttributeError) as exc:
                yield Problem(str(f), 0, f"could not interpret this checkpoint ({exc!r}); skipped")

    def _start(self, doc: JSON, cid: str, ts: str) -> Iterator[Record]:
        self.session_id = "ckpt-" + derive_id(cid, ts)
        stats = as_dict(doc.get("stats"))
        started = system_time(stats.get("start_time")) or ts
        self.prev_ts = started
        yield SessionRecord(SessionHeader(id=self.session_id, agent=AGENT, started=started,
                                          source=AGENT, cwd=str(self.ctx.workspace),
                                          extra={"firstCheckpoint": cid}))

    def _checkpoint(self, doc: JSON, cid: str, ts: str, f: Path) -> Iterator[Record]:
        sid = self.session_id
        prompts = [p for p in as_list(doc.get("user_prompts")) if isinstance(p, str)]
        responses = [r for r in as_list(doc.get("assistant_responses")) if isinstance(r, str)]
        tools = [as_dict(t) for t in as_list(doc.get("tool_calls"))]
        # Shorter lists than last time: the history was cleared, count from zero.
        for key, items in (("p", prompts), ("r", responses), ("t", tools)):
            if len(items) < self.counts[key]:
                self.counts[key] = 0
        new_p = range(self.counts["p"], len(prompts))
        new_r = range(self.counts["r"], len(responses))
        new_t = range(self.counts["t"], len(tools))
        steps: list[tuple[str, int, str, JSON]] = []
        for k in range(max(len(new_p), len(new_r))):
            if k < len(new_p):
                i = new_p[k]
                steps.append(("p", i, Kind.PROMPT, {"text": prompts[i]}))
            if k < len(new_r):
                steps.append(("r", new_r[k], Kind.RESPONSE, {"text": responses[new_r[k]]}))
        at = len(steps) - 1 if steps and steps[-1][0] == "r" else len(steps)
        tool_steps: list[tuple[str, int, str, JSON]] = []
        for j in new_t:
            t = tools[j]
            call_id = "call-" + derive_id(sid, "t", j)
            args = t.get("arguments")
            try:
                args = orjson.loads(args) if isinstance(args, str) else args
            except orjson.JSONDecodeError:
                pass
            tool_steps.append(("t", j, Kind.TOOL_CALL, {
                "name": as_str(t.get("tool_name")) or "?", "input": args, "toolUseId": call_id}))
            tool_steps.append(("u", j, Kind.TOOL_RESULT, {
                "toolUseId": call_id, "isError": t.get("success") is False,
                "output": t.get("result")}))
        steps[at:at] = tool_steps
        self.counts = {"p": len(prompts), "r": len(responses), "t": len(tools)}

        first_event: str | None = None
        for key, index, kind, data in steps:
            eid = "k" + derive_id(sid, key, index)[1:]
            yield EventRecord(Event(eid, sid, self.last_event, ts, kind, data))
            self.last_event = eid
            first_event = first_event or eid
            if kind == Kind.PROMPT and key == "p" and index == 0 and short_title(data["text"]):
                yield MetaRecord(sid, {"title": short_title(data["text"])}, TITLE_FIRST_PROMPT)
        yield from self._diffs(doc, cid, ts, f, first_event)
        self.prev_ts = ts

    def _diffs(
        self, doc: JSON, cid: str, ts: str, f: Path, first_event: str | None
    ) -> Iterator[Record]:
        before: dict[str, bytes | None] = {}
        after: dict[str, bytes | None] = {}
        for diff in as_list(doc.get("file_diffs")):
            d = as_dict(diff)
            path = d.get("path")
            if not isinstance(path, str) or not path:
                yield Problem(str(f), 0, "a file diff has no path; skipped")
                continue
            rel = workspace_relpath(path, None, self.ctx.workspace)
            if rel is None:
                yield Problem(str(f), 0, f"file diff for {path!r} refused: it is outside the "
                              f"workspace {self.ctx.workspace}")
                continue
            before[rel] = str(d.get("before") or "").encode()
            after[rel] = str(d.get("after") or "").encode()
        if not before:
            return
        safe = safe_id(cid) or derive_id(cid)
        start = first_event or self.last_event
        for side, files, event, when in (("before", before, start, self.prev_ts or ts),
                                         ("after", after, self.last_event, ts)):
            yield CheckpointRecord(
                session_id=self.session_id,
                event_id=event,
                checkpoint_id="cj" + derive_id(self.session_id, cid, side)[2:],
                label=f"{side} {safe}"[:120],
                ts=when or None,
                files=files,
                file=str(f),
            )
