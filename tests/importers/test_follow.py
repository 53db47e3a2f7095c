"""Follow live: appended lines are imported poll by poll, new prompts are reported."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.importers import Follower, import_source
from turnback.importers.agents.claude_code import encode_project_dir

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


# -- the event-driven form: poll(changed), roots, turn ends -----------------------------------
def system(ws: Path, sid: str, uuid: str, parent: str, subtype: str) -> str:
    return cc(ws, sid, type="system", uuid=uuid, parentUuid=parent, subtype=subtype,
              content="", durationMs=1200)


def test_every_followable_source_is_followed_by_default(store: Store, tmp_path: Path) -> None:
    from turnback.importers import registry

    follower = Follower(store, home=tmp_path / "home")
    assert follower.sources == registry.followable()
    assert {"claude-code", "codex", "aider"} <= set(follower.sources)
    roots = {name: root for name, root in follower.roots()}
    assert roots["claude-code"].path == (tmp_path / "home" / ".claude" / "projects"
                                         / encode_project_dir(str(store.workspace)))
    assert roots["codex"].recursive and roots["aider"].path == store.workspace


def test_poll_reads_only_the_changed_files(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = project_dir(home, ws)
    a, b = project / "a.jsonl", project / "b.jsonl"
    a.write_text(prompt(ws, "a", "ua1", None, "one"))
    b.write_text(prompt(ws, "b", "ub1", None, "one"))
    follower = Follower(store, sources=["claude-code"], home=home, clock=Clock())
    assert sorted(follower.poll([]).sessions) == ["a", "b"]  # the first poll looks at all
    with a.open("a") as fh:
        fh.write(prompt(ws, "a", "ua2", "ua1", "two"))
    with b.open("a") as fh:
        fh.write(prompt(ws, "b", "ub2", "ub1", "two"))
    assert follower.poll([a]).prompted == ["a"]  # b was not named: not read yet
    assert follower.poll([b]).prompted == ["b"]
    # a file no source listed yet makes its source look again
    c = project / "c.jsonl"
    c.write_text(prompt(ws, "c", "uc1", None, "new session"))
    assert follower.poll([c]).prompted == ["c"]
    # a path outside every root is no one's
    stray = tmp_path / "stray.jsonl"
    stray.write_text(prompt(ws, "d", "ud1", None, "x"))
    assert follower.poll([stray]).sessions == []


def test_a_project_folder_made_later_is_found(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    follower = Follower(store, sources=["claude-code"], home=home, clock=Clock())
    assert follower.poll().sessions == []
    project = project_dir(home, ws)  # Claude Code's first session here makes it
    f = project / "s.jsonl"
    f.write_text(prompt(ws, "s", "u1", None, "first"))
    # the watch reports the new folder (or the file): either makes the source look
    assert follower.poll([project]).prompted == ["s"]


def test_truncated_and_rotated_files_are_read_again(store: Store, ws: Path,
                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    f = project_dir(home, ws) / "s.jsonl"
    f.write_text(prompt(ws, "s", "u1", None, "one"))
    follower = Follower(store, sources=["claude-code"], home=home, clock=Clock())
    follower.poll()
    f.write_text("")  # truncated
    assert follower.poll([f]).events == 0
    f.write_text(prompt(ws, "s", "u1", None, "one") + prompt(ws, "s", "u2", "u1", "two"))
    assert follower.poll([f]).prompted == ["s"]
    old = f.with_suffix(".old")
    f.rename(old)  # rotated away, a new file in its place
    f.write_text(prompt(ws, "s", "u1", None, "one") + prompt(ws, "s", "u2", "u1", "two")
                 + prompt(ws, "s", "u3", "u2", "three"))
    result = follower.poll([f, old])
    assert result.prompted == ["s"] and result.events == 1
    assert [e.id for e in store.session("s").events] == ["u1", "u2", "u3"]


def test_a_linked_transcript_is_never_read(store: Store, ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = project_dir(home, ws)
    secret = tmp_path / "secret.jsonl"
    secret.write_text(prompt(ws, "x", "u1", None, "not for you"))
    link = project / "x.jsonl"
    link.symlink_to(secret)
    follower = Follower(store, sources=["claude-code"], home=home, clock=Clock())
    result = follower.poll()
    assert result.sessions == [] and not store.has_session("x")
    assert any("symbolic link" in p.message for p in result.problems)
    with secret.open("a") as fh:
        fh.write(prompt(ws, "x", "u2", "u1", "more"))
    assert follower.poll([link]).sessions == [] and not store.has_session("x")


def test_a_turn_ends_at_the_sources_record_or_when_the_file_rests(
    store: Store, ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    f = project_dir(home, ws) / "s.jsonl"
    f.write_text(prompt(ws, "s", "u1", None, "old") + system(ws, "s", "d1", "u1", "turn_duration"))
    clock = Clock()
    follower = Follower(store, sources=["claude-code"], home=home, clock=clock, idle_flush=5)
    first = follower.poll()
    assert (first.prompted, first.ended) == ([], [])  # history
    with f.open("a") as fh:
        fh.write(prompt(ws, "s", "u2", "d1", "new"))
    assert (r := follower.poll([f])).prompted == ["s"] and r.ended == []
    assert follower.next_flush() == clock.now + 5
    with f.open("a") as fh:
        fh.write(system(ws, "s", "d2", "u2", "turn_duration"))
    assert follower.poll([f]).ended == ["s"]
    # no end record (an older Claude Code): the turn ends when the file rests
    with f.open("a") as fh:
        fh.write(prompt(ws, "s", "u3", "d2", "again"))
    assert follower.poll([f]).prompted == ["s"]
    clock.now += 1
    assert follower.poll([]).ended == []
    due = follower.next_flush()
    assert due is not None
    clock.now = due
    assert follower.poll([]).ended == ["s"]
    assert follower.next_flush() is None and follower.agent_of("s") == "claude-code"


def test_a_document_source_is_read_again_whole_when_it_changes(
    store: Store, tmp_path: Path
) -> None:
    """A format rewritten whole (seed 004 here; Gemini CLI's JSON chats) is followed too."""
    def snapshot(*texts: str) -> str:
        messages = [{"User": {"blocks": [{"Text": {"text": t}}]}} for t in texts]
        return json.dumps({"version": 1, "messages": messages, "pinned": [False] * len(texts)})

    doc = tmp_path / "snap.json"
    doc.write_text(snapshot("hi"))
    follower = Follower(store, sources=[], paths=[("snapshot-json", doc)], clock=Clock())
    first = follower.poll()
    assert len(first.sessions) == 1 and first.events == 1 and first.prompted == []
    assert follower.poll([doc]).events == 0  # unchanged: not parsed again
    doc.write_text(snapshot("hi", "and now?"))  # the tool rewrites the whole file
    again = follower.poll([doc])
    assert (again.events, again.prompted) == (1, first.sessions)
