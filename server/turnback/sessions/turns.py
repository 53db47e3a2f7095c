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

from ..events import JSON, Event, Kind, is_id, parse_iso
from .event_summary import is_progress, summarize

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
    builder = TurnBuilder()
    builder.feed(events, checkpoint_at)
    return builder.turns(head)


class TurnBuilder:
    """A session's turns, built in one pass over its events in append order and continued
    when more are appended (a session file only grows): a live session's next event costs
    what that event changes, not a rebuild of every turn.

    ``feed`` may be called again with the events appended since, as long as
    ``checkpoint_at`` still says the same of the events fed before (the caller checks;
    otherwise it starts a new builder). ``turns`` publishes copies: a turn already handed
    out is never changed afterwards (a changed turn is copied again), so callers may keep
    the lists they got, and a turn nothing touched keeps its identity from one list to the
    next (what attribution's history compares).
    """

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}  # event id → its turn's id
        self._parents: dict[str, str | None] = {}
        self._turns: dict[str, Turn] = {}  # as built; ``after`` is the turn's own end only
        self._last_cp: dict[str, str | None] = {}  # event id → last checkpoint on its path
        self._started_tools: set[str] = set()
        self._children: dict[str, int] = {}
        self._first_child: dict[str, str] = {}  # turn id → its first continuation's id
        self._current = PRELUDE
        self._latest_cp: str | None = None
        self._dirty: set[str] = set()  # turns to publish again
        self._published: list[Turn] = []
        self._slot: dict[str, int] = {}  # turn id → index in ``_published``
        self._head: str | None = None  # the head ``_on_path`` was computed for
        self._head_known = False  # whether it was among the events then
        self._on_path: set[str] = set()  # turns on the path root → head

    def feed(self, events: Sequence[Event], checkpoint_at: Mapping[str, str]) -> None:
        owner, turns, last_cp, dirty = self.owner, self._turns, self._last_cp, self._dirty
        for e in events:
            if e.id in owner:
                continue  # a repeated id: the first one counts, as in a full read
            parent = e.parent
            if opens_turn(e):
                tid = self._current = e.id
            elif parent is not None and parent in owner:
                tid = owner[parent]
            else:
                tid = self._current  # a root after compaction, or a parent not in the file
            owner[e.id] = tid
            self._parents[e.id] = parent
            turn = turns.get(tid)
            if turn is None:
                turn = self._open(e, tid)
            dirty.add(tid)
            turn.events += 1
            turn.last_event = e.id
            if e.ts > turn.end_ts:
                turn.end_ts = e.ts
            if e.kind == Kind.TOOL_CALL:
                turn.tool_calls += 1
                self._started_tools.add(tid)
            elif e.kind == Kind.TOOL_RESULT and e.data.get("isError") is True:
                turn.tool_calls_failed += 1
            cp = checkpoint_at.get(e.id)
            inherited = last_cp[parent] if parent is not None and parent in last_cp \
                else self._latest_cp
            last_cp[e.id] = cp if cp is not None else inherited
            if cp is not None:
                self._latest_cp = cp
                turn.checkpoints.append(cp)
                if tid in self._started_tools or tid == PRELUDE:
                    turn.after = cp
                else:
                    turn.before = cp  # taken when the prompt arrived, before any tool ran
                    self._touch_parent(turn)

    def _open(self, e: Event, tid: str) -> Turn:
        owner = self.owner
        if tid == PRELUDE:
            turn = Turn(PRELUDE, 0, "", e.ts, e.ts)
        else:
            parent_turn = owner.get(e.parent) if e.parent is not None else None
            turn = Turn(tid, len(self._turns) + (0 if PRELUDE in self._turns else 1),
                        first_line(str(e.data.get("text") or "")), e.ts, e.ts,
                        parent_turn=parent_turn)
            if parent_turn is not None:
                n = self._children[parent_turn] = self._children.get(parent_turn, 0) + 1
                turn.branch_start = n > 1
                if n == 1:
                    self._first_child[parent_turn] = tid
            turn.before = self._last_cp.get(e.parent) if e.parent is not None \
                else self._latest_cp
            self._touch_parent(turn)
        self._turns[tid] = turn
        return turn

    def _touch_parent(self, turn: Turn) -> None:
        """A turn's first continuation starting (or its start known) may end the turn."""
        p = turn.parent_turn
        if p is not None and self._first_child.get(p) == turn.id:
            self._dirty.add(p)

    def turns(self, head: str | None) -> list[Turn]:
        """The turns in append order, as of the events fed so far; ``head``: the session's."""
        self._follow_head(head)
        published, slot = self._published, self._slot
        # in append order (``index``), so new turns are published after the older ones
        for tid in sorted(self._dirty, key=lambda i: self._turns[i].index):
            t = self._publish(self._turns[tid])
            k = slot.get(tid)
            if k is None:
                slot[tid] = len(published)
                published.append(t)
            else:
                published[k] = t
        self._dirty = set()
        return list(published)

    def _publish(self, t: Turn) -> Turn:
        out = Turn(t.id, t.index, t.prompt, t.ts, t.end_ts, t.events, t.tool_calls,
                   t.tool_calls_failed, t.parent_turn, t.branch_start, None, False, t.before,
                   t.after, list(t.checkpoints), t.last_event)
        if out.after is None:  # no checkpoint of its own: it ends where its continuation starts
            nxt = self._turns.get(self._first_child.get(t.id, ""))
            if nxt is not None and nxt.before is not None and nxt.before != t.before:
                out.after = nxt.before
        if self._head_known:
            out.on_head_path = t.id in self._on_path
            out.head = self.owner[self._head or ""] == t.id
        return out

    def _follow_head(self, head: str | None) -> None:
        """The turns on the path root → ``head``: walked from the new head up to the head
        of the last call (the usual append continues it), else up to the root."""
        known = head is not None and head in self.owner
        if head == self._head and known == self._head_known:
            return
        before, old_head, joined = self._on_path, self._head, False
        found: set[str] = set()
        seen: set[str] = set()
        cur = head if known else None
        while cur is not None and cur not in seen and cur in self.owner:
            if cur == old_head and self._head_known:
                joined = True
                break
            seen.add(cur)
            found.add(self.owner[cur])
            cur = self._parents.get(cur)
        on_path = before | found if joined else found
        if known and self._head_known:
            # only the turns whose membership or head-ness changed
            self._dirty |= on_path ^ before
            self._dirty.update(self.owner[h] for h in (old_head, head) if h is not None)
        else:
            self._dirty |= set(self._turns)  # flags appear or disappear on every turn
        self._head, self._head_known, self._on_path = head, known, on_path


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
    # a rewind's or an undo's: the checkpoint it took first (its event's safetyCheckpoint),
    # so that the editor folds that checkpoint's step into this one's row
    safety: str | None = None

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
        if self.safety is not None:
            out["safetyCheckpoint"] = self.safety
        return out


FOLDED_KINDS = frozenset({Kind.THINKING, Kind.USAGE, Kind.RAW})


def result_line(output: object, width: int = RESULT_WIDTH) -> str:
    """A result in one line: its last non-empty line (where test runners and compilers
    put their verdict) that is not only progress marks, shortened."""
    if not isinstance(output, str):
        return ""
    for line in reversed(output.splitlines()):
        line = " ".join(line.split())
        if line and not is_progress(line):
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
        safety = e.data.get("safetyCheckpoint") if e.kind == Kind.REWIND else None
        if is_id(safety):  # store text: an id's shape, bounded, or nothing
            step.safety = str(safety)
        steps.append(step)
    return steps
