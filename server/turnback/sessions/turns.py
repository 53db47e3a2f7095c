"""Turns: the unit people think of a session in — what I asked, what the agent did.

Every prompt opens a turn; every later event belongs to the turn of its nearest
prompt ancestor in the event tree (parents come before children in a session
file, so one pass in append order decides it). A rewound or forked conversation
therefore gives turns on branches, each knowing the turn it continues. Events
before the first prompt (a session header's checkpoint, a loop's start) form
turn 0, "before the first prompt".

Checkpoints are tied to turns by their ``checkpoint`` events: one taken before
the turn's first tool call is the state the turn started from (Claude Code's
file history is taken when the prompt arrives); one taken after it is a state
the turn reached, the last of them its end. A turn without a start checkpoint
starts from the last checkpoint above its prompt; one without an end ends where
its first following turn starts. This module knows only events: the store
supplies which event holds which checkpoint and computes the changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..events import JSON, Event, Kind, parse_iso, summarize

PRELUDE = "prelude"  # the id of turn 0 (events before the first prompt)
LABEL_WIDTH = 200
RESULT_WIDTH = 80


@dataclass(slots=True)
class Turn:
    id: str  # the prompt's event id (PRELUDE for turn 0)
    index: int  # 1-based in append order; 0 for the prelude
    prompt: str  # the prompt's text, at most LABEL_WIDTH characters of its first line
    ts: str
    end_ts: str
    events: int = 0
    tool_calls: int = 0
    tool_calls_failed: int = 0
    parent_turn: str | None = None
    branch_start: bool = False
    on_head_path: bool | None = None
    head: bool = False
    before: str | None = None  # checkpoint id: the workspace when the turn started
    after: str | None = None  # checkpoint id: the workspace when it ended
    checkpoints: list[str] = field(default_factory=list)  # every checkpoint taken in it
    last_event: str = ""  # the turn's last event id (append order)

    def duration_ms(self) -> int | None:
        a, b = parse_iso(self.ts), parse_iso(self.end_ts)
        if a is None or b is None or b < a:
            return None
        return int((b - a) * 1000)

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "index": self.index,
            "prompt": self.prompt,
            "ts": self.ts,
            "endTs": self.end_ts,
            "durationMs": self.duration_ms(),
            "events": self.events,
            "toolCalls": self.tool_calls,
            "toolCallsFailed": self.tool_calls_failed,
            "parentTurn": self.parent_turn,
            "branchStart": self.branch_start,
            "onHeadPath": self.on_head_path,
            "head": self.head,
            "before": self.before,
            "after": self.after,
            "checkpoints": self.checkpoints,
            "lastEvent": self.last_event,
        }


def opens_turn(e: Event) -> bool:
    """A prompt typed by the person (not a subagent's, which is a step of its turn)."""
    return e.kind == Kind.PROMPT and e.data.get("sidechain") is not True


def first_line(text: str, width: int = LABEL_WIDTH) -> str:
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def turn_of_events(events: Sequence[Event]) -> dict[str, str]:
    """Each event's turn id (its nearest prompt ancestor, else the latest turn opened)."""
    out: dict[str, str] = {}
    current = PRELUDE
    for e in events:
        if opens_turn(e):
            out[e.id] = current = e.id
        elif e.parent is not None and e.parent in out:
            out[e.id] = out[e.parent]
        else:
            out[e.id] = current  # a root after compaction, or a parent not in the file
    return out


def build_turns(
    events: Sequence[Event], head: str | None, checkpoint_at: Mapping[str, str]
) -> list[Turn]:
    """The turns of a session in append order; ``checkpoint_at`` maps event id → checkpoint."""
    owner = turn_of_events(events)
    turns: dict[str, Turn] = {}
    last_cp: dict[str, str | None] = {}  # event id → last checkpoint on its path
    started_tools: set[str] = set()
    children: dict[str, int] = {}
    latest_cp: str | None = None
    for e in events:
        tid = owner[e.id]
        turn = turns.get(tid)
        if turn is None:
            parent_turn = owner.get(e.parent) if e.parent is not None else None
            if tid == PRELUDE:
                turn = Turn(PRELUDE, 0, "", e.ts, e.ts)
            else:
                turn = Turn(tid, len(turns) + (0 if PRELUDE in turns else 1),
                            first_line(str(e.data.get("text") or "")), e.ts, e.ts,
                            parent_turn=parent_turn)
                if parent_turn is not None:
                    children[parent_turn] = children.get(parent_turn, 0) + 1
                    turn.branch_start = children[parent_turn] > 1
                above = last_cp.get(e.parent) if e.parent is not None else latest_cp
                turn.before = above
            turns[tid] = turn
        turn.events += 1
        turn.last_event = e.id
        if e.ts > turn.end_ts:
            turn.end_ts = e.ts
        if e.kind == Kind.TOOL_CALL:
            turn.tool_calls += 1
            started_tools.add(tid)
        elif e.kind == Kind.TOOL_RESULT and e.data.get("isError") is True:
            turn.tool_calls_failed += 1
        cp = checkpoint_at.get(e.id)
        inherited = last_cp.get(e.parent) if e.parent is not None and e.parent in last_cp \
            else latest_cp
        last_cp[e.id] = cp if cp is not None else inherited
        if cp is not None:
            latest_cp = cp
            turn.checkpoints.append(cp)
            if tid in started_tools or tid == PRELUDE:
                turn.after = cp
            else:
                turn.before = cp  # taken when the prompt arrived, before any tool ran
    ordered = list(turns.values())
    _end_at_next_start(ordered)
    _mark_head(ordered, events, owner, head)
    return ordered


def _end_at_next_start(turns: list[Turn]) -> None:
    """A turn with no checkpoint of its own ends where its first continuation starts."""
    first_child: dict[str, Turn] = {}
    for t in turns:
        if t.parent_turn is not None and t.parent_turn not in first_child:
            first_child[t.parent_turn] = t
    for t in turns:
        if t.after is None:
            nxt = first_child.get(t.id)
            if nxt is not None and nxt.before is not None and nxt.before != t.before:
                t.after = nxt.before


def _mark_head(turns: list[Turn], events: Sequence[Event], owner: Mapping[str, str],
               head: str | None) -> None:
    if head is None or head not in owner:
        return
    parents = {e.id: e.parent for e in events}
    on_path: set[str] = set()
    cur: str | None = head
    seen: set[str] = set()
    while cur is not None and cur not in seen and cur in owner:
        seen.add(cur)
        on_path.add(owner[cur])
        cur = parents.get(cur)
    for t in turns:
        t.on_head_path = t.id in on_path
        t.head = owner[head] == t.id


# ---------------------------------------------------------------- steps

@dataclass(slots=True)
class Step:
    id: str  # the event id (a tool call's, for a call and its result)
    kind: str  # an event kind; "tool" for a call with its result
    label: str
    ts: str
    detail: str = ""  # a tool's result in one line
    failed: bool = False
    pending: bool = False  # a tool call with no result (yet)
    folded: bool = False  # thinking and usage: shown on request
    result_id: str | None = None
    checkpoint: str | None = None

    def to_json(self) -> JSON:
        out: JSON = {"id": self.id, "kind": self.kind, "label": self.label, "ts": self.ts}
        if self.detail:
            out["detail"] = self.detail
        if self.failed:
            out["failed"] = True
        if self.pending:
            out["pending"] = True
        if self.folded:
            out["folded"] = True
        if self.result_id is not None:
            out["resultId"] = self.result_id
        if self.checkpoint is not None:
            out["checkpoint"] = self.checkpoint
        return out


FOLDED_KINDS = frozenset({Kind.THINKING, Kind.USAGE, Kind.RAW})


def result_line(output: object, width: int = RESULT_WIDTH) -> str:
    """A result in one line: its last non-empty line (where test runners and compilers
    put their verdict), shortened."""
    if not isinstance(output, str):
        return ""
    for line in reversed(output.splitlines()):
        line = " ".join(line.split())
        if line:
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def turn_steps(events: Sequence[Event], turn_id: str, checkpoint_at: Mapping[str, str],
               owner: Mapping[str, str] | None = None) -> list[Step]:
    """The steps of one turn, the prompt excluded: a tool call and its result are one step.
    ``owner`` is ``turn_of_events(events)`` when the caller has it already."""
    if owner is None:
        owner = turn_of_events(events)
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    for e in events:
        if owner.get(e.id) != turn_id or e.id == turn_id:
            continue
        use_id = e.data.get("toolUseId")
        if e.kind == Kind.TOOL_CALL:
            step = Step(e.id, "tool", summarize(e), e.ts, pending=True)
            if isinstance(use_id, str) and use_id:
                calls[use_id] = step
            steps.append(step)
            continue
        if e.kind == Kind.TOOL_RESULT and isinstance(use_id, str) and use_id in calls:
            call = calls.pop(use_id)
            call.pending = False
            call.result_id = e.id
            call.failed = e.data.get("isError") is True
            call.detail = result_line(e.data.get("output"))
            continue
        step = Step(e.id, e.kind, summarize(e) or e.kind, e.ts, folded=e.kind in FOLDED_KINDS)
        if e.kind == Kind.TOOL_RESULT:
            step.failed = e.data.get("isError") is True
            step.detail = result_line(e.data.get("output"))
        step.checkpoint = checkpoint_at.get(e.id)
        steps.append(step)
    return steps
