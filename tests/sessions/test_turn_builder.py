"""Turns continued over appended events give what building them from every event gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from turnback.events import Event, Kind
from turnback.sessions.turns import TurnBuilder, build_turns

KINDS = [Kind.PROMPT, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.RESPONSE, Kind.CHECKPOINT]


@st.composite
def histories(draw: Any) -> tuple[list[Event], dict[str, str], list[int], list[int]]:
    """Events with parents among the earlier ones (branches, roots), checkpoints on some,
    the points where the builder is asked, and for each point a head (an event index)."""
    n = draw(st.integers(1, 40))
    events: list[Event] = []
    at: dict[str, str] = {}
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        parent: str | None = None
        if events:
            choice = draw(st.integers(-2, len(events) - 1))
            parent = events[-1].id if choice == -1 else (None if choice == -2
                                                         else events[choice].id)
        data: dict[str, Any] = {"text": f"prompt {i}"} if kind == Kind.PROMPT else {}
        if kind == Kind.TOOL_RESULT:
            data["isError"] = draw(st.booleans())
        ts = f"2026-01-01T00:00:{draw(st.integers(0, 59)):02d}.000Z"
        e = Event(f"e{i:04d}", "s", parent, ts, kind, data)
        events.append(e)
        if kind == Kind.CHECKPOINT or draw(st.integers(0, 5)) == 0:
            at[e.id] = f"c{i:04d}"
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
    heads = [draw(st.integers(-1, n - 1)) for _ in range(len(cuts) + 1)]
    return events, at, cuts, heads


def _head(events: list[Event], k: int) -> str | None:
    return None if k < 0 else events[k].id


@settings(max_examples=300, deadline=None)
@given(histories())
def test_fed_in_pieces_equals_built_at_once(h: tuple[list[Event], dict[str, str], list[int],
                                                     list[int]]) -> None:
    events, at, cuts, heads = h
    builder = TurnBuilder()
    handed: list[tuple[list[Any], list[Any]]] = []  # lists handed out, as json then and now
    done = 0
    for cut, head in zip([*cuts, len(events)], heads, strict=True):
        builder.feed(events[done:cut], at)
        done = max(done, cut)
        head_id = _head(events[:done], head) if head < done else None
        got = builder.turns(head_id)
        expected = build_turns(events[:done], head_id, at)
        assert [t.to_json() for t in got] == [t.to_json() for t in expected]
        handed.append(([t.to_json() for t in got], got))
    for then, turns in handed:  # a list once handed out is never changed afterwards
        assert [t.to_json() for t in turns] == then


def test_an_untouched_turn_keeps_its_identity() -> None:
    events = [Event("p1", "s", None, "2026-01-01T00:00:01.000Z", Kind.PROMPT, {"text": "a"}),
              Event("t1", "s", "p1", "2026-01-01T00:00:02.000Z", Kind.TOOL_CALL, {}),
              Event("p2", "s", "t1", "2026-01-01T00:00:03.000Z", Kind.PROMPT, {"text": "b"}),
              Event("t2", "s", "p2", "2026-01-01T00:00:04.000Z", Kind.TOOL_CALL, {})]
    at = {"p1": "c1", "t1": "c2", "t2": "c3"}
    builder = TurnBuilder()
    builder.feed(events[:3], at)
    first = builder.turns("p2")
    builder.feed(events[3:], at)
    second = builder.turns("t2")
    assert second[0] is first[0]  # turn 1 ended with its own checkpoint: nothing changed
    assert second[1] is not first[1] and second[1].after == "c3" and first[1].after is None
