"""Claude Code and Codex: lines before the session's header line are held, then replayed.

The header (Claude Code: the first line with a sessionId and a timestamp; Codex: the
session_meta line) may come late; the lines before it are held up to each agent's bound
and replayed after the session record, in order. A file with no header is a session
named after the file, started at the bound or at the end of a final read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turnback.importers import header_line
from turnback.importers.agents import claude_code, codex
from turnback.importers.base import (
    Context,
    EventRecord,
    JsonlParser,
    Problem,
    RawLine,
    SessionRecord,
)

SID = "0b7f3a52-3c1e-4d1e-9a39-2f1c0c6f3b10"
TS = "2026-01-02T03:04:05.000Z"


def claude_line(n: int) -> dict[str, Any]:
    """A line of no session (no sessionId): Claude Code's summary."""
    return {"type": "summary", "summary": f"held-{n}", "leafUuid": f"leaf-{n}"}


def claude_header() -> dict[str, Any]:
    return {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": SID,
            "timestamp": TS, "cwd": "/w", "message": {"role": "user", "content": "hello"}}


def codex_line(n: int) -> dict[str, Any]:
    return {"timestamp": TS, "type": "event_msg",
            "payload": {"type": "user_message", "message": f"held-{n}"}}


def codex_header() -> dict[str, Any]:
    return {"timestamp": TS, "type": "session_meta",
            "payload": {"id": SID, "timestamp": TS, "cwd": "/w"}}


AGENTS = {
    "claude-code": (claude_code.ClaudeCodeParser, claude_line, claude_header,
                    claude_code.MAX_PENDING_LINES),
    "codex": (codex.CodexParser, codex_line, codex_header, codex.MAX_PENDING_LINES),
}


def feed(parser: JsonlParser, objs: list[dict[str, Any]], first: int = 1) -> list[Any]:
    out: list[Any] = []
    for n, obj in enumerate(objs, first):
        data = json.dumps(obj).encode() + b"\n"
        out.extend(parser.feed(RawLine(n, 0, len(data), data)))
    return out


def parser_for(agent: str, tmp_path: Path) -> JsonlParser:
    cls = AGENTS[agent][0]
    parser: JsonlParser = cls(tmp_path / "rollout-file.jsonl", Context(tmp_path, tmp_path))
    return parser


def events(records: list[Any]) -> list[EventRecord]:
    return [r for r in records if isinstance(r, EventRecord)]


def lines_of(records: list[Any]) -> list[int]:
    """The numbers of the ``line(n)`` lines the events came from, in the records' order."""
    out = []
    for r in events(records):
        text = json.dumps(r.event.data)
        out.extend(n for n in range(1, 1000) if f'"held-{n}"' in text)
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_lines_before_the_header_come_after_the_session_in_order(
        agent: str, tmp_path: Path) -> None:
    _, line, header, _ = AGENTS[agent]
    parser = parser_for(agent, tmp_path)
    assert feed(parser, [line(1), line(2), line(3)]) == []  # held: no session yet
    records = feed(parser, [header()], first=4)
    assert isinstance(records[0], SessionRecord) and records[0].header.id == SID
    assert not any(isinstance(r, SessionRecord) for r in records[1:])
    assert lines_of(records) == [1, 2, 3]  # replayed once, in order
    later = feed(parser, [line(5)], first=5)
    assert lines_of(later) == [5]
    assert not any(isinstance(r, SessionRecord) for r in later)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_file_without_a_header_starts_at_the_bound(agent: str, tmp_path: Path) -> None:
    _, line, _, bound = AGENTS[agent]
    parser = parser_for(agent, tmp_path)
    assert feed(parser, [line(n) for n in range(1, bound)]) == []
    records = feed(parser, [line(bound)], first=bound)
    assert isinstance(records[0], SessionRecord)
    assert records[0].header.id == "rollout-file"  # named after the file
    assert lines_of(records) == list(range(1, bound + 1))


@pytest.mark.parametrize("agent", AGENTS)
def test_held_lines_wait_for_more_until_the_read_is_final(agent: str, tmp_path: Path) -> None:
    _, line, _, _ = AGENTS[agent]
    parser = parser_for(agent, tmp_path)
    assert feed(parser, [line(1), line(2)]) == []
    assert list(parser.finish(False)) == []  # a follower's read: more lines may come
    records = list(parser.finish(True))
    assert isinstance(records[0], SessionRecord) and records[0].header.id == "rollout-file"
    assert lines_of(records) == [1, 2]
    assert not any(isinstance(r, SessionRecord) for r in parser.finish(True))  # started once


def odd_parser(agent: str, tmp_path: Path) -> JsonlParser:
    """``agent``'s parser whose mapping of a line marked ``odd`` raises, as a line of a shape
    the mapping never met does (Claude Code's ``{"type": "system", "subtype": {}}``)."""
    base = AGENTS[agent][0]

    class Odd(base):  # type: ignore[valid-type,misc]
        def on_line(self, obj: dict[str, Any], line: RawLine) -> Iterator[Any]:
            if obj.get("odd"):  # raised while the records are taken, as the agents' do
                raise TypeError("unhashable type: 'dict'")
            yield from super().on_line(obj, line)

    parser: JsonlParser = Odd(tmp_path / "rollout-file.jsonl", Context(tmp_path, tmp_path))
    return parser


def problem_lines(records: list[Any]) -> list[int]:
    return [r.line for r in records if isinstance(r, Problem)]


@pytest.mark.parametrize("agent", AGENTS)
def test_an_odd_held_line_is_its_own_loss_when_the_header_comes(
        agent: str, tmp_path: Path) -> None:
    """A held line that cannot be mapped is one problem naming it; the session, the header
    and the other held lines are imported (the whole replay was dropped with it, the
    session's record too: every later line then named no known session)."""
    _, line, header, _ = AGENTS[agent]
    parser = odd_parser(agent, tmp_path)
    assert feed(parser, [line(1), {**line(2), "odd": True}, line(3)]) == []
    records = feed(parser, [header()], first=4)
    assert isinstance(records[0], SessionRecord) and records[0].header.id == SID
    assert lines_of(records) == [1, 3]
    assert problem_lines(records) == [2]
    assert "could not interpret this line" in str(
        next(r for r in records if isinstance(r, Problem)))
    assert lines_of(feed(parser, [line(5)], first=5)) == [5]


@pytest.mark.parametrize("agent", AGENTS)
def test_an_odd_held_line_of_a_file_without_a_header_is_its_own_loss(
        agent: str, tmp_path: Path) -> None:
    """The final read's replay of a file that never names its session: the odd line is one
    problem, the session and the other lines are imported (it raised out of ``finish``,
    which nothing guards: the import, and every file after it, ended in a traceback)."""
    _, line, _, _ = AGENTS[agent]
    parser = odd_parser(agent, tmp_path)
    assert feed(parser, [{**line(1), "odd": True}, line(2)]) == []
    records = list(parser.finish(True))
    assert isinstance(records[0], SessionRecord) and records[0].header.id == "rollout-file"
    assert lines_of(records) == [2]
    assert problem_lines(records) == [1]


@pytest.mark.parametrize("agent", AGENTS)
def test_held_lines_are_bounded_in_bytes_too(agent: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines held before a header are bounded by their bytes as well as their count: each
    may be up to 64 MiB, so 200 of them were 12.5 GiB in memory. Past the bound the session
    starts as a file with no header does, and the held lines are replayed."""
    _, line, _, bound = AGENTS[agent]
    size = len(json.dumps(line(1)).encode()) + 1
    monkeypatch.setattr(header_line, "MAX_HELD_BYTES", size * 3)
    parser = parser_for(agent, tmp_path)
    assert feed(parser, [line(1), line(2)]) == []
    records = feed(parser, [line(3)], first=3)  # the third line reaches the byte bound
    assert bound > 3  # the count's bound is not what started it
    assert isinstance(records[0], SessionRecord) and records[0].header.id == "rollout-file"
    assert lines_of(records) == [1, 2, 3]
    assert lines_of(feed(parser, [line(4)], first=4)) == [4]
