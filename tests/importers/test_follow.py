"""Follow live: appended lines are imported poll by poll, new prompts are reported."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.importers import Follower, import_source
from turnback.importers.claude_code import encode_project_dir

from .conftest import TRANSCRIPTS, need_transcripts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def project_dir(home: Path, ws: Path) -> Path:
    d = home / ".claude" / "projects" / encode_project_dir(str(ws.resolve()))
    d.mkdir(parents=True, exist_ok=True)
    return d


def cc(ws: Path, sid: str, **obj: Any) -> str:
    base = {"sessionId": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(ws)}
    return json.dumps({**base, **obj}) + "\n"


def prompt(ws: Path, sid: str, uuid: str, parent: str | None, text: str) -> str:
    return cc(ws, sid, type="user", uuid=uuid, parentUuid=parent,
              message={"role": "user", "content": text})


def answer(ws: Path, sid: str, uuid: str, parent: str, mid: str, out: int) -> str:
    return cc(ws, sid, type="assistant", uuid=uuid, parentUuid=parent,
              message={"id": mid, "role": "assistant", "model": "m",
                       "content": [{"type": "text", "text": "ok"}],
                       "usage": {"input_tokens": 1, "output_tokens": out}})


def test_follow_reports_new_prompts_and_flushes_when_idle(
    store: Store, ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    project = project_dir(home, ws)
    f = project / "s-1.jsonl"
    f.write_text(prompt(ws, "s-1", "u1", None, "old prompt")
                 + answer(ws, "s-1", "a1", "u1", "m1", 5))
    clock = Clock()
    follower = Follower(store, home=home, idle_flush=5.0, clock=clock)

    first = follower.poll()  # what was there before following began is history
    assert first.sessions == ["s-1"] and first.prompted == [] and first.events == 2

    with f.open("a") as fh:
        fh.write(prompt(ws, "s-1", "u2", "a1", "new prompt"))
        fh.write(answer(ws, "s-1", "a2", "u2", "m2", 7)[:40])  # half written
    clock.now += 1
    second = follower.poll()
    assert second.prompted == ["s-1"]
    # the prompt started a new turn, so the first answer's usage is complete
    assert [e.id for e in store.session("s-1").events][-2:] == ["a1:usage", "u2"]

    with f.open("a") as fh:
        fh.write(answer(ws, "s-1", "a2", "u2", "m2", 7)[40:])
    clock.now += 1
    third = follower.poll()
    assert (third.events, third.prompted) == (1, [])
    assert follower.poll().events == 0  # nothing new, not idle long enough

    clock.now += 10
    idle = follower.poll()  # the last answer's usage is written once the file rests
    assert idle.events == 1
    assert store.stats("s-1")["tokens"]["output"] == 12
    assert follower.poll().events == 0

    # a session that starts while following: its first prompt is new
    (project / "s-2.jsonl").write_text(prompt(ws, "s-2", "v1", None, "hello"))
    clock.now += 1
    assert follower.poll().prompted == ["s-2"]


def test_follow_survives_a_replaced_file(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    f = project_dir(home, ws) / "s-1.jsonl"
    f.write_text(prompt(ws, "s-1", "u1", None, "one") + prompt(ws, "s-1", "u2", "u1", "two"))
    follower = Follower(store, home=home, report_existing=True, clock=Clock())
    assert follower.poll().prompted == ["s-1"]
    f.write_text(prompt(ws, "s-1", "u1", None, "one"))  # rewritten shorter
    result = follower.poll()
    assert result.events == 0
    assert [e.id for e in store.session("s-1").events] == ["u1", "u2"]


def test_follow_a_codex_rollout_and_an_explicit_path(
    store: Store, ws: Path, tmp_path: Path
) -> None:
    rollout = tmp_path / "codex" / "sessions" / "2026" / "01" / "01" / "rollout-x.jsonl"
    rollout.parent.mkdir(parents=True)
    meta = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "0199aaaa-0000-7000-8000-000000000009", "cwd": str(ws)}}
    rollout.write_text(json.dumps(meta) + "\n")
    elsewhere = tmp_path / "log" / "history.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text("")
    follower = Follower(store, sources=["codex"], paths=[("ralph", elsewhere)],
                        env={"CODEX_HOME": str(tmp_path / "codex")}, clock=Clock())
    assert follower.poll().sessions == ["0199aaaa-0000-7000-8000-000000000009"]
    with rollout.open("a") as fh:
        fh.write(json.dumps({"timestamp": "2026-01-01T00:00:01.000Z", "type": "event_msg",
                             "payload": {"type": "user_message", "message": "go"}}) + "\n")
    with elsewhere.open("a") as fh:
        fh.write(json.dumps({"ts": "2026-01-01T00:00:00Z",
                             "type": {"kind": "loop_started", "prompt": "p"}}) + "\n")
    result = follower.poll()
    assert result.prompted == ["0199aaaa-0000-7000-8000-000000000009"]
    assert len(result.sessions) == 2


def test_following_a_real_transcript_in_random_pieces_equals_importing_it(
    store: Store, ws: Path, tmp_path: Path
) -> None:
    need_transcripts()
    source = TRANSCRIPTS / "claude-code/marot+spotter/subagent.jsonl"
    data = source.read_bytes()
    home = tmp_path / "home"
    live = project_dir(home, ws) / source.name
    live.write_bytes(b"")
    clock = Clock()
    # the transcript says another cwd: follow it by path, not by workspace
    follower = Follower(store, sources=[], paths=[("claude-code", live)], clock=clock,
                        idle_flush=5.0)
    rng = random.Random(6)
    pos = 0
    while pos < len(data):
        step = rng.randint(1, 20_000)
        with live.open("ab") as fh:
            fh.write(data[pos : pos + step])
        pos += step
        clock.now += 1
        follower.poll()
    clock.now += 60
    follower.poll()

    (tmp_path / "ref").mkdir()
    reference = Store.open(tmp_path / "ref")
    import_source(reference, "claude-code", source)
    (sid,) = [s.header.id for s in reference.sessions()[0]]
    got = {e.id for e in store.session(sid).events}
    want = {e.id for e in reference.session(sid).events}
    assert want <= got and all(i.endswith(":usage") for i in got - want)
    mine, theirs = store.stats(sid), reference.stats(sid)
    for key in ("prompts", "responses", "toolCalls", "toolResults", "tokens", "checkpoints"):
        assert mine[key] == theirs[key], key


def test_a_subagent_prompt_is_not_a_new_turn(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = project_dir(home, ws)
    (project / "s-1.jsonl").write_text(prompt(ws, "s-1", "u1", None, "main"))
    follower = Follower(store, home=home, clock=Clock())
    follower.poll()
    sub = project / "s-1" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-x.jsonl").write_text(cc(ws, "s-1", type="user", uuid="v1", parentUuid=None,
                                          isSidechain=True, agentId="x",
                                          message={"role": "user", "content": "sub task"}))
    result = follower.poll()
    assert result.sessions == ["s-1.agent-x"] and result.prompted == []
    assert store.stats("s-1.agent-x")["prompts"] == 1
