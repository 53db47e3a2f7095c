"""Continue an agent from before a turn: the fork of its own session file, checked
against the real transcripts (read in place; the forks go to a temporary folder)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from shared_data import need_transcripts
from turnback import Store
from turnback.errors import InvalidInput
from turnback.importers.base import Context
from turnback.importers.resume import find_session_file, plan_fork, write_fork
from turnback.importers.runner import import_source
from wsutil import write_codex_rollout


def _prompts(store: Store, sid: str) -> list[tuple[str, str]]:
    return [(t.id, t.prompt) for t in store.turns(sid) if t.id != "prelude"]


def _sessions(store: Store) -> list[str]:
    items, _ = store.sessions()
    return [s.header.id for s in items]


CASES = [
    ("claude-code", "claude-code/marot+spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"),
    ("claude-code", "claude-code/marot+spotter/tool_heavy.jsonl"),
    ("claude-code",
     "claude-code/d-kimuson+claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"),
    ("claude-code", "claude-code/kvsankar+agent-history/session-01.jsonl"),
    ("codex", "codex/kvsankar+agent-history/session-01.jsonl"),
]


@pytest.mark.parametrize(("agent", "rel"), CASES)
def test_fork_holds_exactly_the_turns_before(agent: str, rel: str, tmp_path: Path) -> None:
    source = need_transcripts() / rel
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = Context(workspace=ws, home=tmp_path / "home", env={})
    with Store.open(ws) as store:
        import_source(store, agent, source, home=tmp_path / "home", env={})
        sid = next(s for s in _sessions(store) if "." not in s)  # the main session
        turns = _prompts(store, sid)
    if len(turns) < 2:
        pytest.skip(f"{rel} has {len(turns)} turn(s): nothing before a later one")
    for k in sorted({1, len(turns) - 1}):
        plan = plan_fork(agent, source, turns[k][0], ctx)
        out = tmp_path / f"fork-{k}"
        out.mkdir()
        plan = dataclasses.replace(plan, target=out / plan.target.name)
        written = write_fork(plan, ctx)
        assert plan.new_id in written.name
        ws2 = tmp_path / f"ws{k}"
        ws2.mkdir()
        with Store.open(ws2) as again:
            res = import_source(again, agent, written, home=tmp_path / "home", env={})
            assert plan.new_id in [str(s) for s in res.sessions], res.sessions
            forked = _prompts(again, plan.new_id)
        assert [p for _, p in forked] == [p for _, p in turns[:k]], f"{rel} before turn {k}"
        with pytest.raises(FileExistsError):
            write_fork(plan, ctx)  # never over a file


def test_first_turn_and_other_agents_are_refused(tmp_path: Path) -> None:
    source = need_transcripts() / CASES[0][1]
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = Context(workspace=ws, home=tmp_path, env={})
    with Store.open(ws) as store:
        import_source(store, "claude-code", source, home=tmp_path, env={})
        sid = next(s for s in _sessions(store) if "." not in s)
        first = _prompts(store, sid)[0][0]
    with pytest.raises(InvalidInput, match="first turn"):
        plan_fork("claude-code", source, first, ctx)
    with pytest.raises(InvalidInput, match="cannot be continued"):
        plan_fork("aider", source, first, ctx)


def test_finds_the_agents_own_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = Context(workspace=ws, home=tmp_path, env={})
    proj = tmp_path / ".claude" / "projects" / str(ws).replace("/", "-")
    proj.mkdir(parents=True)
    (proj / "abc.jsonl").write_bytes(orjson.dumps({"sessionId": "abc"}) + b"\n")
    assert find_session_file("claude-code", "abc", ctx) == proj / "abc.jsonl"
    day = tmp_path / ".codex" / "sessions" / "2025" / "01" / "02"
    day.mkdir(parents=True)
    rollout = day / "rollout-2025-01-02T10-00-00-0199aaaa-bbbb-cccc-dddd-eeeeffff0000.jsonl"
    rollout.write_bytes(b"{}\n")
    assert find_session_file("codex", "0199aaaa-bbbb-cccc-dddd-eeeeffff0000", ctx) == rollout


def test_codex_fork_of_a_three_turn_rollout(tmp_path: Path) -> None:
    """No real Codex transcript here has two turns: one written in its format."""
    sid = "0199aaaa-bbbb-cccc-dddd-eeeeffff0000"
    day = tmp_path / ".codex" / "sessions" / "2025" / "01" / "02"
    day.mkdir(parents=True)
    source = day / f"rollout-2025-01-02T10-00-00-{sid}.jsonl"
    write_codex_rollout(source, sid)
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = Context(workspace=ws, home=tmp_path, env={})
    with Store.open(ws) as store:
        import_source(store, "codex", source, home=tmp_path, env={})
        turns = _prompts(store, sid)
    assert [p for _, p in turns] == ["first ask", "second ask", "third ask"]
    plan = plan_fork("codex", find_session_file("codex", sid, ctx), turns[2][0], ctx)
    assert plan.target.parent == day and plan.command == ["codex", "resume", plan.new_id]
    written = write_fork(plan, ctx)
    assert find_session_file("codex", plan.new_id, ctx) == written
    ws2 = tmp_path / "ws2"
    ws2.mkdir()
    with Store.open(ws2) as again:
        import_source(again, "codex", written, home=tmp_path, env={})
        assert [p for _, p in _prompts(again, plan.new_id)] == ["first ask", "second ask"]
    assert source.read_bytes().count(b"third ask") == 1, "the original is unchanged"
