"""A line's origin: the turn that wrote it, a person between turns, or the first checkpoint.

An origin is shared by every line one step of history brought in, so a file's lines hold
references to a few objects, and equal origins can be folded into ranges.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import JSON

TURN = "turn"  # changed inside one turn (whatever made the change: a tool, a shell, a generator)
SHARED = "shared"  # changed while turns of two or more sessions were open at once
PERSON = "person"  # changed between turns: a person, or any other process
INITIAL = "initial"  # already there at the folder's first checkpoint
UNCOMMITTED = "uncommitted"  # in the workspace, not yet in any checkpoint


@dataclass(frozen=True, slots=True)
class TurnRef:
    """One turn of one session, as attribution names it."""

    session_id: str
    turn_id: str
    index: int
    prompt: str
    agent: str
    model: str | None
    ts: str
    end_ts: str
    before: str  # checkpoint ids: where the turn started and ended
    after: str

    def to_json(self) -> JSON:
        return {"sessionId": self.session_id, "agent": self.agent, "model": self.model,
                "turn": {"id": self.turn_id, "index": self.index, "prompt": self.prompt,
                         "ts": self.ts, "endTs": self.end_ts, "before": self.before,
                         "after": self.after}}


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a line came from: ``kind`` (see above), the checkpoint where it first appeared
    and the one before it, the turn(s) open meanwhile (one for TURN, several for SHARED),
    and the time range of the step (``since``..``until``, the two checkpoints' times)."""

    kind: str
    checkpoint: str | None
    previous: str | None = None
    turns: tuple[TurnRef, ...] = ()
    since: str | None = None
    until: str | None = None

    @property
    def agent(self) -> str | None:
        return self.turns[0].agent if self.kind == TURN else None

    def who(self) -> str:
        """A short name of the author: the agent, "a + b" when shared, else the kind."""
        if self.kind == TURN:
            return self.turns[0].agent
        if self.kind == SHARED:
            return " + ".join(t.agent for t in self.turns)
        return self.kind

    def to_json(self) -> JSON:
        first = self.turns[0] if self.kind == TURN else None
        out: JSON = {
            "kind": self.kind,
            "agent": first.agent if first else None,
            "model": first.model if first else None,
            "sessionId": first.session_id if first else None,
            "turn": ({"id": first.turn_id, "index": first.index, "prompt": first.prompt,
                      "ts": first.ts, "endTs": first.end_ts, "before": first.before,
                      "after": first.after} if first else None),
            "checkpoint": self.checkpoint,
            "previous": self.previous,
            "since": self.since,
            "until": self.until,
        }
        if self.kind == SHARED:
            out["shared"] = [t.to_json() for t in self.turns]
        return out
