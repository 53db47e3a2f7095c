"""Turns of a session and a file's history, built by the store from events and checkpoints."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import NotFound
from turnback.events import Kind, now_iso


def _turn(store: Store, sid: str, ws: Path, prompt: str, edits: dict[str, str],
          fail: bool = False) -> str:
    """One recorded turn: prompt, a tool call and its result, edits, a checkpoint after."""
    p = store.append(sid, Kind.PROMPT, {"text": prompt})
    store.append(sid, Kind.THINKING, {"text": "hmm"})
    store.append(sid, Kind.TOOL_CALL, {"name": "Bash", "input": {"command": "pytest -q"},
                                       "toolUseId": "u" + p.id})
    store.append(sid, Kind.TOOL_RESULT, {"toolUseId": "u" + p.id, "isError": fail,
                                         "output": "....F\n1 failed, 4 passed in 0.1s\n"})
    for name, text in edits.items():
        (ws / name).write_text(text)
    store.checkpoint(label=f"after {prompt}", session_id=sid, auto=True)
    store.append(sid, Kind.RESPONSE, {"text": "done"})
    return p.id


@pytest.fixture
def recorded(store: Store, ws: Path) -> tuple[Store, str, list[str]]:
    (ws / "a.txt").write_text("one\n")
    sid = store.start_session(title="t", agent="claude-code").id
    store.checkpoint(label="start", session_id=sid)
    ids = [
        _turn(store, sid, ws, "make b\nmore words", {"b.txt": "b\n"}),
        _turn(store, sid, ws, "change a", {"a.txt": "one\ntwo\nthree\n"}, fail=True),
        _turn(store, sid, ws, "nothing", {}),
    ]
    return store, sid, ids


def test_turns_have_prompt_counts_and_checkpoints(recorded: tuple[Store, str, list[str]]) -> None:
    store, sid, ids = recorded
    turns = store.turns(sid)
    assert [t.id for t in turns] == ["prelude", *ids]
    assert [t.prompt for t in turns[1:]] == ["make b", "change a", "nothing"]
    assert [(t.tool_calls, t.tool_calls_failed) for t in turns[1:]] == [(1, 0), (1, 1), (1, 0)]
    # each turn starts where the one before ended
    assert turns[1].before == turns[0].after or turns[1].before is not None
    assert turns[2].before == turns[1].after
    assert turns[3].before == turns[2].after
    assert turns[3].head and all(t.on_head_path for t in turns)
    c1 = store.turn_changes(turns[1])
    assert c1 is not None and [(c.path, c.status) for c in c1.changes] == [("b.txt", "added")]
    c2 = store.turn_changes(turns[2])
    assert c2 is not None and (c2.files, c2.added, c2.removed) == (1, 2, 0)
    c3 = store.turn_changes(turns[3])
    assert c3 is not None and c3.files == 0


def test_turn_page_latest_and_offset(recorded: tuple[Store, str, list[str]]) -> None:
    store, sid, ids = recorded
    page = store.turn_page(sid, None, 2)
    assert (page.total, page.offset) == (4, 2)
    assert [t.id for t in page.turns] == ids[1:]
    assert page.changes[ids[1]].files == 1
    first = store.turn_page(sid, 0, 1)
    assert [t.id for t in first.turns] == ["prelude"]


def test_steps_pair_calls_with_results(recorded: tuple[Store, str, list[str]]) -> None:
    store, sid, ids = recorded
    steps = store.steps(sid, ids[1])
    kinds = [s.kind for s in steps]
    assert kinds == ["thinking", "tool", "checkpoint", "response"]
    tool = steps[1]
    assert tool.label == "Bash(pytest -q)" and tool.failed and not tool.pending
    assert tool.detail == "1 failed, 4 passed in 0.1s"
    assert steps[0].folded and not tool.folded
    assert steps[2].checkpoint is not None
    with pytest.raises(NotFound):
        store.steps(sid, "nope")


def test_branches_after_a_conversation_rewind(recorded: tuple[Store, str, list[str]]) -> None:
    store, sid, ids = recorded
    prompt2 = store.find_event(ids[1], sid)
    store.fork(prompt2.parent or "", sid)  # back to before "change a"
    new = store.append(sid, Kind.PROMPT, {"text": "another way"})
    turns = {t.id: t for t in store.turns(sid)}
    assert turns[new.id].branch_start and turns[new.id].parent_turn == ids[0]
    assert turns[new.id].head and turns[new.id].on_head_path
    assert turns[ids[1]].on_head_path is False and turns[ids[0]].on_head_path


def test_imported_checkpoint_before_tools_is_the_turn_start(store: Store) -> None:
    """Claude Code's file history is taken when the prompt arrives: the turn's start."""
    sid = store.start_session(agent="claude-code").id
    p1 = store.append(sid, Kind.PROMPT, {"text": "first"})
    cp1 = store.import_checkpoint({"x.py": b"1\n"}, sid, event_id=p1.id, checkpoint_id="cc1")
    store.append(sid, Kind.TOOL_CALL, {"name": "Edit"}, parent=HEAD_OF(store, sid))
    p2 = store.append(sid, Kind.PROMPT, {"text": "second"})
    cp2 = store.import_checkpoint({"x.py": b"1\n2\n"}, sid, event_id=p2.id, checkpoint_id="cc2")
    turns = store.turns(sid)
    assert (turns[0].before, turns[0].after) == (cp1.id, cp2.id)
    assert (turns[1].before, turns[1].after) == (cp2.id, None)
    ch = store.turn_changes(turns[0])
    assert ch is not None and (ch.files, ch.added) == (1, 1)


def HEAD_OF(store: Store, sid: str) -> str | None:
    return store.session(sid).head


def test_file_history_newest_first_with_turns(recorded: tuple[Store, str, list[str]], ws: Path
                                              ) -> None:
    store, sid, _ids = recorded
    versions, total = store.file_history("a.txt")
    assert total == 2  # first seen at "start", changed by "change a"
    assert [v.status for v in versions] == ["modified", "added"]
    assert (versions[0].lines_added, versions[0].lines_removed) == (2, 0)
    assert versions[0].turn_prompt == "change a" and versions[0].agent == "claude-code"
    # the version before: the checkpoint just before, holding what the older row holds
    before = versions[0].previous
    assert before is not None and before.label.startswith("after make b")
    assert store.read_file(before.id, "a.txt") == store.read_file(versions[1].checkpoint.id,
                                                                  "a.txt") == b"one\n"
    assert versions[1].previous is None
    (ws / "a.txt").unlink()
    store.checkpoint(label="gone", session_id=sid)
    versions, total = store.file_history("a.txt", 0, 1)
    assert total == 3 and versions[0].status == "deleted"
    assert store.file_history("never.txt") == ([], 0)


def test_file_history_says_which_versions_a_rewind_saved(
        recorded: tuple[Store, str, list[str]], ws: Path) -> None:
    """A rewind's safety checkpoint is a version of the file (the only copy of the edit it
    saved), but not one the turn's agent wrote: File History listed it under the turn's
    prompt, like the agent's own; it is now marked as what it is."""
    store, _sid, _ids = recorded
    older = store.file_history("a.txt")[0][1]  # "start": a.txt first seen
    (ws / "a.txt").write_text("an edit of the user's\n")
    res = store.rewind(older.checkpoint.id)
    versions, _total = store.file_history("a.txt")
    saved = [v for v in versions if v.safety]
    assert [v.checkpoint.id for v in saved] == [res.safety_checkpoint]
    assert store.read_file(saved[0].checkpoint.id, "a.txt") == b"an edit of the user's\n"
    assert all(not v.safety for v in versions if v.checkpoint.id != res.safety_checkpoint)
    by_id = {c.id: c for c in store.checkpoints(None)}
    said = saved[0].to_json(by_id)
    assert said["safety"] is True and versions[-1].to_json(by_id)["safety"] is False
    # the checkpoint as the listing says it (safety_names.checkpoint_json): with its words
    assert said["checkpoint"]["safetyOf"]["words"] == f"before rewind to “{older.checkpoint.label}”"


def test_nearest_checkpoint_is_the_last_before_the_turn(store: Store, ws: Path) -> None:
    (ws / "f").write_text("x")
    early = store.checkpoint(label="before anything")
    sid = store.start_session().id
    store.append(sid, Kind.PROMPT, {"text": "go"})
    (turn,) = store.turns(sid)
    assert turn.before is None
    near = store.nearest_checkpoint(turn)
    assert near is not None and near.id == early.id


def test_kept_turns_follow_appends_and_new_checkpoints(recorded: tuple[Store, str, list[str]],
                                                       ws: Path) -> None:
    store, sid, _ids = recorded
    assert len(store.turns(sid)) == 4
    p = store.append(sid, Kind.PROMPT, {"text": "fifth"})
    assert [t.id for t in store.turns(sid)][-1] == p.id
    (ws / "c.txt").write_text("c\n")
    store.append(sid, Kind.TOOL_CALL, {"name": "Write"})
    cp = store.checkpoint(label="after fifth", session_id=sid)
    assert store.turns(sid)[-1].after == cp.id


def test_a_rewinds_safety_checkpoint_ends_no_turn(store: Store, ws: Path) -> None:
    """As the demo does: fork back to a checkpoint of turn 1, rewind the files there. The
    rewind's safety checkpoint (the state left: turn 2's files) lands among turn 1's events,
    but turn 1 still ends with its own checkpoint, and shows only its own changes."""
    (ws / "a.txt").write_text("one\n")
    sid = store.start_session(title="t", agent="claude-code").id
    store.checkpoint(label="start", session_id=sid)
    first = _turn(store, sid, ws, "make b", {"b.txt": "b\n"})
    own_end = store.checkpoints(sid)[-1]
    _turn(store, sid, ws, "make c", {"c.txt": "c\n"})
    store.fork(own_end.event_id, sid)
    done = store.rewind(own_end.id)
    turn = next(t for t in store.turns(sid) if t.id == first)
    assert turn.after == own_end.id and done.safety_checkpoint not in turn.checkpoints


def test_turns_continued_over_appends_match_a_fresh_read(recorded: tuple[Store, str, list[str]],
                                                         ws: Path) -> None:
    """The kept turns are continued from where the session file was read; after appends,
    a fork, a rewind (its safety checkpoint tied to an event read before) and a title
    change they are what another process, reading everything, builds."""
    store, sid, ids = recorded
    store.turns(sid)
    _turn(store, sid, ws, "fourth", {"d.txt": "d\n"})
    store.turns(sid)
    store.fork(ids[1], sid)
    store.turns(sid)
    store.rewind(store.checkpoints(sid)[1].id)
    store.turns(sid)
    _turn(store, sid, ws, "on the branch", {"e.txt": "e\n"})
    store.update_session(sid, title="renamed")
    kept = [t.to_json() for t in store.turns(sid)]
    with Store.open(ws) as fresh:
        assert kept == [t.to_json() for t in fresh.turns(sid)]
        assert fresh.session(sid).header.title == "renamed"
    assert store.session(sid).header.title == "renamed"


def test_event_checkpoints_continued_over_new_checkpoints_match_a_fresh_read(
        recorded: tuple[Store, str, list[str]], ws: Path) -> None:
    """Which checkpoint each event holds is continued over the checkpoints added since
    (not made again over all of them): after another session's checkpoints, an event
    naming a checkpoint before the index holds it, a fork and a rewind, it is what a
    fresh read makes."""
    store, sid, ids = recorded
    other = store.start_session(agent="codex").id

    def same_as_fresh() -> None:
        kept = [t.to_json() for t in store.turns(sid)]
        at = store._view(sid).checkpoint_at
        with Store.open(ws) as fresh:
            assert kept == [t.to_json() for t in fresh.turns(sid)]
            assert at == fresh._view(sid).checkpoint_at

    same_as_fresh()
    _turn(store, sid, ws, "fourth", {"d.txt": "d\n"})
    same_as_fresh()
    (ws / "o.txt").write_text("o\n")
    store.checkpoint(session_id=other)
    same_as_fresh()
    early = store.append(sid, Kind.CHECKPOINT, {"checkpoint": "0123456789ab"})
    same_as_fresh()
    store.import_checkpoint({"i.txt": b"i\n"}, session_id=other, checkpoint_id="0123456789ab")
    same_as_fresh()
    assert store._view(sid).checkpoint_at[early.id] == "0123456789ab"
    # a record naming an event of the session that is no checkpoint event (as a pulled
    # one does): the index's word for that event
    p = store.append(sid, Kind.PROMPT, {"text": "sixth"})
    store.index.add(replace(store.checkpoints()[-1], id="fedcba987654", session_id=sid,
                            event_id=p.id, ts=now_iso()), fsync=False)
    same_as_fresh()
    assert store._view(sid).checkpoint_at[p.id] == "fedcba987654"
    _turn(store, sid, ws, "fifth", {"e.txt": "e\n"})
    store.fork(ids[1], sid)
    same_as_fresh()
    store.rewind(store.checkpoints(sid)[1].id)
    same_as_fresh()
    _turn(store, sid, ws, "on the branch", {"f.txt": "f\n"})
    same_as_fresh()


def test_a_session_file_written_over_in_place_is_read_again(
        recorded: tuple[Store, str, list[str]], ws: Path) -> None:
    """Same inode, not shorter, other bytes: not an append, so not continued — whether
    the size stayed (the modification time changed) or the file also grew."""
    store, sid, _ids = recorded
    before = [t.prompt for t in store.turns(sid)]
    path = ws / ".turnback" / "sessions" / f"{sid}.jsonl"
    data = path.read_bytes()
    renamed = data.replace(b'"text":"change a"', b'"text":"CHANGE A"')
    assert renamed != data
    st = path.stat()
    with path.open("r+b") as f:  # written over, not replaced: the inode stays
        f.write(renamed)
    # a clock tick may not have passed since the last append: say that one did
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert [t.prompt for t in store.turns(sid)] == [p.replace("change a", "CHANGE A")
                                                    for p in before]
    # written over near its end, then grown: the bytes before the last read changed
    data = path.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    last = data[cut:].replace(b'"text":"done"', b'"text":"DONE"')
    with path.open("r+b") as f:
        f.seek(cut)
        f.write(last + b'{"type":"meta","title":"grown"}\n')
    turns = store.turns(sid)
    assert turns[2].prompt == "CHANGE A"
    assert [s.label for s in store.steps(sid, turns[-1].id)][-1] == "DONE"


def test_an_undos_step_names_the_rewind_it_undid(tmp_path: Path) -> None:
    """A turn's steps said "undo (files)" for an undo and a redo alike (their labels were
    built below the store, without the checkpoints); they say what the session's rows say."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    store = Store.open(ws, create=True)
    try:
        sid = store.start_session(title="t", agent="claude-code", session_id="s1").id
        p = store.append(sid, Kind.PROMPT, {"text": "change a"})
        good = store.checkpoint(label="Tests pass", session_id=sid)
        (ws / "a.txt").write_text("two\n")
        store.rewind(good.id)
        store.undo()
        store.undo()  # the undo of the undo: a redo
        rewinds = [s.label for s in store.steps(sid, p.id) if s.kind == Kind.REWIND]
        assert rewinds == [f"rewind to {good.id} (files)",
                           "undo of rewind to “Tests pass” (files)",
                           "redo of rewind to “Tests pass” (files)"]
    finally:
        store.close()
