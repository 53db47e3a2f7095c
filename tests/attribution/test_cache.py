"""The kept walks: continued after a new checkpoint, started again when the past changed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from turnback import Store
from turnback.attribution.blame import blame_file
from turnback.attribution.cache import BlameCache
from turnback.attribution.history import History, load_history
from turnback.events import Kind


@pytest.fixture
def reads(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The blobs the walks read."""
    seen: list[str] = []
    real = store.read_blob

    def counted(blob: str) -> bytes:
        seen.append(blob)
        return real(blob)

    monkeypatch.setattr(store, "read_blob", counted)
    return seen


def test_a_new_checkpoint_reads_only_the_new_version(store: Store, ws: Path,
                                                     reads: list[str]) -> None:
    f = ws / "f.txt"
    for n in range(1, 6):
        f.write_text("".join(f"line {k}\n" for k in range(n)))
        store.checkpoint(label=str(n))
    cache = BlameCache()
    cache.blame(store, "f.txt")
    assert len(reads) == 4  # the last version is the file on disk: not read again
    f.write_text(f.read_text() + "line 5\n")
    store.checkpoint(label="6")
    f.write_text(f.read_text() + "typed since\n")
    cache.invalidate()  # as the server does when the store changes
    got = cache.blame(store, "f.txt")
    assert len(reads) == 5  # one more version read, the ones before not again
    assert [o.kind for o in got.origins] == ["initial"] + ["person"] * 5 + ["uncommitted"]
    assert got.origins == blame_file(store, load_history(store), "f.txt").origins


def test_an_untrusted_cache_sees_a_change_no_one_announced(store: Store, ws: Path) -> None:
    f = ws / "f.txt"
    f.write_text("a\n")
    store.checkpoint(label="1")
    cache = BlameCache()
    assert [o.kind for o in cache.blame(store, "f.txt").origins] == ["initial"]
    f.write_text("a\nb\n")
    store.checkpoint(label="2")
    # trusted and not invalidated: the kept history (the server invalidates on every change)
    assert [o.kind for o in cache.blame(store, "f.txt").origins] == ["initial", "uncommitted"]
    assert [o.kind for o in cache.blame(store, "f.txt", trusted=False).origins] == [
        "initial", "person"]


def test_a_turn_found_later_restarts_the_walk(store: Store, ws: Path) -> None:
    """Steps already walked change author (the session's events arrive after the
    checkpoints, as an import does): the kept walk is not continued, it starts again."""
    f = ws / "f.txt"
    f.write_text("a\n")
    store.checkpoint(label="start")
    sid = store.start_session(agent="aider").id
    p = store.append(sid, Kind.PROMPT, {"text": "add b"})
    c1 = store.checkpoint(session_id=sid)
    f.write_text("a\nb\n")
    c2 = store.checkpoint(label="end")  # not yet tied to the turn
    cache = BlameCache()
    assert [o.kind for o in cache.blame(store, "f.txt").origins] == ["initial", "person"]
    store.append(sid, Kind.TOOL_CALL, {"name": "Edit"}, parent=p.id)
    store.append(sid, Kind.CHECKPOINT, {"checkpoint": c2.id})
    cache.invalidate()
    got = cache.blame(store, "f.txt")
    assert [o.who() for o in got.origins] == ["initial", "aider"]
    assert got.origins[1].turns[0].before == c1.id


def test_the_editors_unsaved_text_is_blamed_as_given(store: Store, ws: Path) -> None:
    (ws / "f.txt").write_text("a\nb\n")
    store.checkpoint(label="1")
    got = BlameCache().blame(store, "f.txt", text=b"a\nnew\nb\n")
    assert [o.kind for o in got.origins] == ["initial", "uncommitted", "initial"]


def test_a_history_loaded_from_the_one_before_is_the_history_loaded_afresh(
        store: Store, ws: Path) -> None:
    """After a new turn, a turn's end found later, a rewind and a second session: the
    continued history says what a fresh load says of every step, digests included, and
    keeps the objects of the steps that did not change."""
    f = ws / "f.txt"
    f.write_text("a\n")
    store.checkpoint(label="start")
    sid = store.start_session(agent="aider").id
    history = load_history(store)

    def same_as_fresh() -> None:
        assert_same_as_fresh(store, history)

    for n in range(3):
        store.append(sid, Kind.PROMPT, {"text": f"turn {n}"})
        store.checkpoint(session_id=sid)
        store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
        f.write_text(f.read_text() + f"line {n}\n")
        store.checkpoint(session_id=sid)
        before = history
        history = load_history(store, before)
        same_as_fresh()
        kept = len(before.checkpoints)
        assert all(a is b for a, b in zip(history.authors[:kept - 1], before.authors,
                                          strict=False))
    p = store.append(sid, Kind.PROMPT, {"text": "late"})
    store.checkpoint(session_id=sid)
    f.write_text("rewritten\n")
    late = store.checkpoint(label="not yet the turn's")
    before, history = history, load_history(store, history)
    same_as_fresh()
    store.append(sid, Kind.TOOL_CALL, {"name": "Edit"}, parent=p.id)
    store.append(sid, Kind.CHECKPOINT, {"checkpoint": late.id})
    before, history = history, load_history(store, history)
    same_as_fresh()
    assert history.authors[-1].who() == "aider"
    store.rewind(store.checkpoints()[1].id)
    other = store.start_session(agent="codex").id
    store.append(other, Kind.PROMPT, {"text": "elsewhere"})
    store.checkpoint(session_id=other)
    before, history = history, load_history(store, history)
    same_as_fresh()


def assert_same_as_fresh(store: Store, history: History) -> None:
    """``history`` (continued from earlier ones) says what a fresh load says of every step,
    digests included, and keeps for the next load what a fresh load would."""
    fresh = load_history(store)
    assert history.authors == fresh.authors
    assert history.around == fresh.around
    assert [c.id for c in history.checkpoints] == [c.id for c in fresh.checkpoints]
    assert history.position == fresh.position
    assert history.sids == fresh.sids
    assert [c.id for c in history.every] == [c.id for c in fresh.every]
    assert history.sessions.keys() == fresh.sessions.keys()
    for sid, kept in history.sessions.items():
        again = fresh.sessions[sid]
        assert (kept.spans, kept.by_end, kept.waiting) == (again.spans, again.by_end,
                                                          again.waiting)
    last = len(fresh.checkpoints) - 1
    if last >= 0:
        assert history.digest(last) == fresh.digest(last)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_history_continued_turn_after_turn_is_the_history_loaded_afresh(
        store: Store, ws: Path, seed: int) -> None:
    """Random histories of two agents: turns one after the other and open at once, a
    person's edits, a turn's end found later, conversation branches, file rewinds. After
    every change the continued history is the fresh one, and the steps before the
    change keep their authors (the very objects)."""
    rng = random.Random(seed)
    f = ws / "f.txt"
    f.write_text("a\n")
    store.checkpoint(label="start")
    sids = [store.start_session(agent="claude-code", model="m").id,
            store.start_session(agent="codex").id]
    open_: dict[str, str] = {}  # session → its open turn's prompt event id
    late: list[tuple[str, str, str]] = []  # (session, prompt event, checkpoint) to end later
    history = load_history(store)

    def edit() -> None:
        f.write_text(f.read_text() + f"{rng.random()}\n")

    for n in range(24):
        sid = rng.choice(sids)
        op = rng.choice(["turn", "turn", "open", "close", "person", "late", "end late",
                         "branch", "rewind"])
        if op == "turn" or (op == "close" and sid not in open_):
            store.append(sid, Kind.PROMPT, {"text": f"turn {n}"})
            store.checkpoint(session_id=sid)
            store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
            edit()
            store.checkpoint(session_id=sid)
        elif op == "open" and sid not in open_:
            open_[sid] = store.append(sid, Kind.PROMPT, {"text": f"open {n}"}).id
            store.checkpoint(session_id=sid)
            edit()
        elif op == "close" or op == "open":
            p = open_.pop(sid)
            store.append(sid, Kind.TOOL_CALL, {"name": "Edit"}, parent=p)
            edit()
            store.checkpoint(session_id=sid)
        elif op == "person":
            edit()
            store.checkpoint(label=f"person {n}")
        elif op == "late":
            p = store.append(sid, Kind.PROMPT, {"text": f"late {n}"}).id
            store.checkpoint(session_id=sid)
            edit()
            late.append((sid, p, store.checkpoint(label=f"not yet {n}").id))
        elif op == "end late" and late:
            lsid, p, cid = late.pop(0)
            e = store.append(lsid, Kind.TOOL_CALL, {"name": "Edit"}, parent=p)
            store.append(lsid, Kind.CHECKPOINT, {"checkpoint": cid}, parent=e.id)
        elif op == "branch":
            events = [e for e in store.session(sid).events if e.kind == Kind.PROMPT]
            if events:
                store.append(sid, Kind.PROMPT, {"text": f"branch {n}"},
                             parent=rng.choice(events).id)
                store.checkpoint(session_id=sid)
                edit()
                store.checkpoint(session_id=sid)
        elif op == "rewind":
            store.rewind(rng.choice(store.checkpoints()).id)
        before, history = history, load_history(store, history)
        assert_same_as_fresh(store, history)
        same = next((i for i, (a, b) in enumerate(zip(before.around, history.around,
                                                      strict=False)) if a != b),
                    len(before.around))
        assert all(a is b for a, b in zip(history.authors[:same], before.authors[:same],
                                          strict=True))


def test_a_walk_continued_over_random_edits_is_a_fresh_walk_and_counts_agents_lines(
        store: Store, ws: Path) -> None:
    """Lines replaced, inserted, deleted and moved by an agent's turns and by a person
    between them: the kept walk, continued after every checkpoint, gives the lines and
    origins a fresh walk gives, and the number of agents' lines it keeps count of as it
    goes is the count over all the lines (also for the editor's unsaved text); the
    origins' JSON kept from one answer to the next gives the same answers."""
    rng = random.Random(7)
    f = ws / "f.py"
    text = [f"line {i} = value_{i}\n" for i in range(60)]
    f.write_text("".join(text))
    store.checkpoint(label="start")
    sid = store.start_session(agent="claude-code").id
    cache = BlameCache()

    def edit() -> None:
        for _ in range(rng.randrange(1, 4)):
            k = rng.randrange(len(text))
            op = rng.choice(["replace", "insert", "delete", "move"])
            if op == "replace":
                text[k] = f"changed {rng.random()}\n"
            elif op == "insert":
                text.insert(k, f"new {rng.random()}\n")
            elif op == "delete" and len(text) > 5:
                del text[k]
            else:
                block = text[k : k + 3]
                del text[k : k + 3]
                at = rng.randrange(len(text) + 1)
                text[at:at] = block
        f.write_text("".join(text) if rng.random() < 0.9 else "".join(text).rstrip("\n"))

    for n in range(15):
        edit()
        store.checkpoint(label=f"person {n}")
        store.append(sid, Kind.PROMPT, {"text": f"turn {n}"})
        store.checkpoint(session_id=sid)
        store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
        edit()
        store.checkpoint(session_id=sid)
        got = cache.blame(store, "f.py", trusted=False)  # (no watcher to say it changed)
        fresh = blame_file(store, load_history(store), "f.py")
        assert (got.lines, got.origins) == (fresh.lines, fresh.origins)
        counted = got.ranges_json()["agentLines"]
        assert got.agents is not None
        assert counted == sum(1 for o in got.origins if o.kind in ("turn", "shared")) > 0
        unsaved = cache.blame(store, "f.py", text=f.read_bytes() + b"typed\n", trusted=False)
        assert unsaved.ranges_json()["agentLines"] == counted
        # the origins' JSON kept from earlier answers gives the same answers
        for blame in (got, unsaved):
            assert blame.ranges_json(3, 40, cache.origins_json()) == blame.ranges_json(3, 40)


def test_a_turn_naming_a_checkpoint_the_history_lacked_is_looked_at_again(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint taken while a load ran (the turn names it, the load's list lacks it):
    the next load, continued, gives the turn its steps."""
    f = ws / "f.txt"
    f.write_text("a\n")
    store.checkpoint(label="start")
    sid = store.start_session(agent="aider").id
    store.append(sid, Kind.PROMPT, {"text": "one"})
    store.checkpoint(session_id=sid)
    store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
    f.write_text("a\nb\n")
    store.checkpoint(session_id=sid)
    real = store.checkpoints
    monkeypatch.setattr(store, "checkpoints", lambda *a: real(*a)[:-1])
    early = load_history(store)
    assert [o.kind for o in early.authors] == ["initial", "person"]
    assert early.sessions[sid].waiting
    monkeypatch.setattr(store, "checkpoints", real)
    history = load_history(store, early)
    assert_same_as_fresh(store, history)
    assert history.authors[-1].who() == "aider" and not history.sessions[sid].waiting


def test_the_workspace_as_the_last_checkpoint_holds_it_is_not_diffed_again(
        store: Store, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after a turn the file is what its end checkpoint holds: its lines and origins
    are the walk's, without splitting and diffing the file on disk once more."""
    import turnback.attribution.blame as blame_mod

    f = ws / "f.txt"
    f.write_text("a\n")
    store.checkpoint(label="1")
    f.write_text("a\nb\n")
    store.checkpoint(label="2")
    cache = BlameCache()
    cache.blame(store, "f.txt")
    diffs: list[object] = []
    for name in ("carry", "carry_text"):  # the diff of lines, of bytes
        real = getattr(blame_mod, name)
        monkeypatch.setattr(blame_mod, name,
                            lambda *a, real=real: diffs.append(a) or real(*a))
    got = cache.blame(store, "f.txt")
    assert diffs == [] and [o.kind for o in got.origins] == ["initial", "person"]
    f.write_text("a\nb\nc\n")
    assert [o.kind for o in cache.blame(store, "f.txt").origins] == [
        "initial", "person", "uncommitted"]
    assert len(diffs) == 1
