"""Sessions: header, events, head, forks, meta lines, unknown kinds, stats.

Every behaviour is checked on both backends (files and memory): they must agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from turnback import Conflict, Event, InvalidInput, Kind, NotFound, SessionHeader, Store


@pytest.fixture(params=["files", "memory"])
def st(request: pytest.FixtureRequest, ws: Path) -> Iterator[Store]:
    s = Store.open(ws) if request.param == "files" else Store.memory(ws)
    yield s
    s.close()


def test_header_fields(st: Store) -> None:
    h = st.start_session(title="fix tests", agent="claude-code", model="opus", cwd="/w",
                         session_id="s-1", started="2025-01-02T03:04:05.000Z",
                         extra={"k": [1]})
    log = st.session("s-1")
    assert log.header == h
    assert (h.id, h.title, h.agent, h.model, h.cwd, h.source) == (
        "s-1", "fix tests", "claude-code", "opus", "/w", "turnback")
    assert log.header.extra == {"k": [1]}
    assert log.events == [] and log.head is None


def test_duplicate_session_is_a_conflict(st: Store) -> None:
    st.start_session(session_id="dup")
    with pytest.raises(Conflict, match="dup"):
        st.start_session(session_id="dup")
    h, created = st.ensure_session(SessionHeader("dup"))
    assert not created and h.id == "dup"
    _h2, created2 = st.ensure_session(SessionHeader("new-one", title="t"))
    assert created2 and st.session("new-one").header.title == "t"


@pytest.mark.parametrize("bad", ["../x", "a/b", "-x", "a" * 129, "sp ace"])
def test_bad_session_ids_refused(st: Store, bad: str) -> None:
    with pytest.raises(InvalidInput, match="session id"):
        st.start_session(session_id=bad)


def test_unknown_session(st: Store) -> None:
    with pytest.raises(NotFound, match="nope"):
        st.append("nope", Kind.NOTE, {})
    with pytest.raises(NotFound):
        st.session("nope")


def test_append_links_to_head_and_head_moves(st: Store) -> None:
    s = st.start_session()
    a = st.append(s.id, Kind.PROMPT, {"text": "hi"})
    b = st.append(s.id, Kind.RESPONSE, {"text": "hello"})
    assert a.parent is None and b.parent == a.id
    log = st.session(s.id)
    assert [e.id for e in log.events] == [a.id, b.id]
    assert log.head == b.id
    assert st.backend.head(s.id) == b.id
    root = st.append(s.id, Kind.NOTE, {"text": "new root"}, parent=None)
    assert root.parent is None and st.session(s.id).head == root.id


def test_append_validates_input(st: Store) -> None:
    s = st.start_session()
    with pytest.raises(InvalidInput, match="kind"):
        st.append(s.id, "", {})
    with pytest.raises(InvalidInput, match="data"):
        st.append(s.id, Kind.NOTE, [1, 2])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="parent"):
        st.append(s.id, Kind.NOTE, {}, parent="../evil")
    assert st.session(s.id).events == []


def test_fork_branches_without_deleting(st: Store) -> None:
    s = st.start_session()
    p1 = st.append(s.id, Kind.PROMPT, {"text": "one"})
    r1 = st.append(s.id, Kind.RESPONSE, {"text": "r1"})
    p2 = st.append(s.id, Kind.PROMPT, {"text": "two"})
    assert st.fork(p1.id) == (s.id, p1.id)
    assert st.session(s.id).head == p1.id
    alt = st.append(s.id, Kind.RESPONSE, {"text": "alternative"})
    assert alt.parent == p1.id
    log = st.session(s.id)
    assert {e.id for e in log.events} == {p1.id, r1.id, p2.id, alt.id}  # nothing deleted
    assert [e.id for e in st.children(s.id, p1.id)] == [r1.id, alt.id]
    assert [e.id for e in st.conversation(s.id)] == [p1.id, alt.id]
    assert [e.id for e in st.conversation(s.id, head=p2.id)] == [p1.id, r1.id, p2.id]
    with pytest.raises(NotFound):
        st.fork("no-such-event")


def test_meta_lines_update_header_and_keep_head(st: Store) -> None:
    s = st.start_session(title="old")
    e = st.append(s.id, Kind.PROMPT, {"text": "x"})
    st.update_session(s.id, title="new title", model="m2")
    st.end_session(s.id, ts="2030-01-01T00:00:00.000Z")
    log = st.session(s.id)
    assert log.header.title == "new title" and log.header.model == "m2"
    assert log.header.ended == "2030-01-01T00:00:00.000Z"
    assert log.head == e.id
    nxt = st.append(s.id, Kind.NOTE, {})
    assert nxt.parent == e.id
    with pytest.raises(InvalidInput, match="source"):
        st.update_session(s.id, source="x")


def test_unknown_kinds_round_trip(st: Store) -> None:
    s = st.start_session()
    data = {"nested": {"list": [1, 2.5, None, True, "ü"]}, "emoji": "🙂"}
    e = st.append(s.id, "some_future_kind", data)
    got = st.session(s.id).events[0]
    assert got == e
    assert got.kind == "some_future_kind" and got.data == data


def test_append_events_keeps_ids_and_skips_known(st: Store) -> None:
    s = st.start_session()
    evs = [Event("e1", s.id, None, "2025-01-01T00:00:00.000Z", Kind.PROMPT, {"text": "a"}),
           Event("e2", s.id, "e1", "2025-01-01T00:00:01.000Z", Kind.RESPONSE, {"text": "b"})]
    assert st.append_events(s.id, evs) == 2
    assert st.append_events(s.id, evs) == 0  # re-import adds nothing
    log = st.session(s.id)
    assert [(e.id, e.parent, e.ts) for e in log.events] == [
        ("e1", None, "2025-01-01T00:00:00.000Z"), ("e2", "e1", "2025-01-01T00:00:01.000Z")]
    assert log.head == "e2"


def test_find_event(st: Store) -> None:
    s = st.start_session()
    e = st.append(s.id, Kind.NOTE, {"text": "x"})
    assert st.find_event(e.id) == e
    assert st.find_event(e.id, s.id) == e
    with pytest.raises(NotFound, match="no event"):
        st.find_event("zzzz", s.id)


def test_stats_counted_from_events(st: Store) -> None:
    s = st.start_session()
    a = s.id
    st.append(a, Kind.PROMPT, {"text": "p"}, ts="2025-01-01T00:00:00.000Z")
    st.append(a, Kind.TOOL_CALL, {"name": "Bash", "input": {}, "toolUseId": "t1"})
    st.append(a, Kind.TOOL_RESULT, {"toolUseId": "t1", "isError": True})
    st.append(a, Kind.TOOL_CALL, {"name": "Read", "toolUseId": "t2"})
    st.append(a, Kind.TOOL_RESULT, {"toolUseId": "t2", "isError": False})
    st.append(a, Kind.RESPONSE, {"text": "r"})
    st.append(a, Kind.ITERATION_COMPLETED, {"iteration": 1, "success": True})
    st.append(a, Kind.ITERATION_COMPLETED, {"iteration": 2, "success": False})
    st.append(a, Kind.EVENT_PUBLISHED, {"topic": "x"})
    # tokens: a message's usage repeated on several lines counts once, its last figure
    st.append(a, Kind.USAGE, {"messageId": "m1", "input": 10, "output": 1})
    st.append(a, Kind.USAGE, {"messageId": "m1", "input": 10, "output": 5, "cacheRead": 7})
    st.append(a, Kind.USAGE, {"messageId": "m2", "input": 3, "output": 2, "cacheCreation": 4})
    st.append(a, Kind.USAGE, {"input": 1, "output": 1})  # no message id: always counted
    st.append(a, Kind.MERGE_COMPLETED, {"commit": "abc123"})
    st.append(a, Kind.LOOP_COMPLETED, {"reason": "done"}, ts="2025-01-01T00:00:02.500Z")
    stats = st.stats(a)
    expect = {"prompts": 1, "responses": 1, "toolCalls": 2, "toolCallsFailed": 1,
              "toolResults": 2, "iterations": 2, "iterationsFailed": 1, "eventsPublished": 1,
              "checkpoints": 0, "rewinds": 0, "completion": "done", "termination": None,
              "merge": {"status": "completed", "commit": "abc123"}, "events": 15}
    assert {k: stats[k] for k in expect} == expect
    assert stats["tokens"] == {"input": 14, "output": 8, "cacheRead": 7, "cacheCreation": 4}
    assert stats["startedAt"] == "2025-01-01T00:00:00.000Z"
    assert stats["durationMs"] > 0


def test_stats_termination_and_failed_merge(st: Store) -> None:
    s = st.start_session()
    st.append(s.id, Kind.MERGE_FAILED, {"reason": "conflict"})
    st.append(s.id, Kind.LOOP_TERMINATED, {"signal": "SIGTERM"})
    stats = st.stats(s.id)
    assert stats["termination"] == "SIGTERM" and stats["completion"] is None
    assert stats["merge"] == {"status": "failed", "reason": "conflict"}


def test_stats_follow_new_appends(st: Store) -> None:
    s = st.start_session()
    st.append(s.id, Kind.PROMPT, {"text": "1"})
    assert st.stats(s.id)["prompts"] == 1  # summary cached here (file backend)
    st.append(s.id, Kind.PROMPT, {"text": "2"})
    st.append(s.id, Kind.USAGE, {"messageId": "m", "input": 5})
    st.append(s.id, Kind.USAGE, {"messageId": "m", "input": 6})
    stats = st.stats(s.id)
    assert stats["prompts"] == 2 and stats["tokens"]["input"] == 6


def test_sessions_listing_and_query(st: Store) -> None:
    st.start_session(title="alpha task", agent="codex", session_id="a1",
                     started="2025-01-01T00:00:00.000Z")
    st.start_session(title="beta", agent="claude-code", session_id="b2",
                     started="2025-02-01T00:00:00.000Z")
    items, total = st.sessions()
    assert total == 2 and [s.header.id for s in items] == ["b2", "a1"]  # newest first
    assert [s.header.id for s in st.sessions(query="ALPHA")[0]] == ["a1"]
    assert [s.header.id for s in st.sessions(query="claude")[0]] == ["b2"]
    page, total = st.sessions(offset=1, limit=1)
    assert total == 2 and [s.header.id for s in page] == ["a1"]


# -- the file backend's format -----------------------------------------------------------

def lines(store: Store, sid: str) -> list[dict[str, object]]:
    path = store.root / "sessions" / f"{sid}.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()]


def test_file_format_header_events_control_lines(store: Store) -> None:
    s = store.start_session(title="t", session_id="s1")
    e1 = store.append(s.id, Kind.PROMPT, {"text": "x"})
    store.append(s.id, Kind.RESPONSE, {"text": "y"})
    store.fork(e1.id)
    store.update_session(s.id, title="t2")
    ls = lines(store, "s1")
    assert ls[0]["type"] == "session" and ls[0]["id"] == "s1" and ls[0]["title"] == "t"
    assert set(ls[1]) == {"id", "session", "parent", "ts", "kind", "data"}
    assert ls[3] == {"type": "head", "head": e1.id}
    assert ls[4]["type"] == "meta" and ls[4]["title"] == "t2" and ls[4]["head"] == e1.id
    reopened = Store.open(store.workspace)
    assert reopened.session("s1").head == e1.id
    assert reopened.session("s1").header.title == "t2"


def test_file_session_torn_tail_and_bad_line(store: Store) -> None:
    s = store.start_session(session_id="s1")
    e1 = store.append(s.id, Kind.PROMPT, {"text": "x"})
    path = store.root / "sessions" / "s1.jsonl"
    with open(path, "ab") as f:
        f.write(b"garbage line\n")
    e2 = store.append(s.id, Kind.NOTE, {"text": "after garbage"})
    with open(path, "ab") as f:
        f.write(b'{"id": "torn", "sess')
    log = store.session("s1")
    assert [e.id for e in log.events] == [e1.id, e2.id]
    assert [(p.line, "not valid JSON" in p.message) for p in log.problems] == [(3, True)]
    e3 = store.append(s.id, Kind.NOTE, {"text": "repairs the tail"})
    assert e3.parent == e2.id
    assert [e.id for e in store.session("s1").events] == [e1.id, e2.id, e3.id]
    assert b'"id": "torn"' not in path.read_bytes()


def test_file_summary_index_survives_reopen(store: Store) -> None:
    s = store.start_session(session_id="s1")
    store.append(s.id, Kind.PROMPT, {"text": "x"})
    assert store.stats("s1")["prompts"] == 1
    store.close()
    assert (store.root / "index" / "summaries.json").exists()
    other = Store.open(store.workspace)
    other.append("s1", Kind.PROMPT, {"text": "y"})
    assert Store.open(store.workspace).stats("s1")["prompts"] == 2


def test_session_without_header_is_damage(store: Store) -> None:
    (store.root / "sessions" / "bad.jsonl").write_bytes(b'{"id":"e","session":"bad"}\n')
    from turnback import StoreDamaged

    with pytest.raises(StoreDamaged, match="no session header"):
        store.session("bad")
    # listing keeps working, leaving the damaged one out
    assert store.sessions()[1] == 0


def _same_as_load(st: Store, sid: str) -> None:
    log = st.session(sid)
    n = len(log.events)
    for offset, limit in [(0, 1), (0, n + 5), (1, 2), (max(0, n - 2), 10), (n, 3), (n + 7, 1)]:
        page = st.session_page(sid, offset, limit)
        assert page.events == log.events[offset : offset + limit]
        assert (page.total, page.head, page.problems) == (n, log.head, log.problems)


def test_session_page_is_a_slice_of_the_log(st: Store) -> None:
    s = st.start_session(session_id="s1")
    e1 = st.append(s.id, Kind.PROMPT, {"text": "x"})
    _same_as_load(st, "s1")
    for i in range(5):
        st.append(s.id, Kind.RESPONSE, {"text": f"r{i}"})
    _same_as_load(st, "s1")
    st.fork(e1.id)
    _same_as_load(st, "s1")
    st.update_session(s.id, title="t2")
    st.append(s.id, Kind.NOTE, {"text": "after the fork"})
    _same_as_load(st, "s1")
    with pytest.raises(NotFound):
        st.session_page("nope", 0, 10)


def test_file_session_page_follows_damage_and_growth(store: Store) -> None:
    s = store.start_session(session_id="s1")
    store.append(s.id, Kind.PROMPT, {"text": "x"})
    path = store.root / "sessions" / "s1.jsonl"
    _same_as_load(store, "s1")
    with open(path, "ab") as f:
        f.write(b"garbage line\n\n[1]\n")
        f.write(b'{"id": "e", "session": "s1", "ts": "t"}\n')  # no kind: not an event
    _same_as_load(store, "s1")
    store.append(s.id, Kind.NOTE, {"text": "after garbage"})
    with open(path, "ab") as f:
        f.write(b'{"id": "torn", "sess')
    _same_as_load(store, "s1")
    store.append(s.id, Kind.NOTE, {"text": "repairs the tail"})
    _same_as_load(store, "s1")
    # rewritten in place of the old file (another inode): read again
    data = path.read_bytes().split(b"\n")
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"\n".join(data[:2]) + b"\n")
    tmp.replace(path)
    _same_as_load(store, "s1")
    (store.root / "sessions" / "bad.jsonl").write_bytes(b'{"id":"e","session":"bad"}\n')
    from turnback import StoreDamaged

    with pytest.raises(StoreDamaged, match="no session header"):
        store.session_page("bad", 0, 10)


def test_summary_index_layout_growth_and_damage(store: Store) -> None:
    s = store.start_session(session_id="s1")
    store.append(s.id, Kind.PROMPT, {"text": "x"})
    assert store.stats("s1")["prompts"] == 1
    store.close()
    idx = store.root / "index"
    data = orjson.loads((idx / "summaries.json").read_bytes())
    assert data["format"] == 1 and "acc" not in data["sessions"]["s1"]
    assert data["sessions"]["s1"]["stats"]["prompts"] == 1
    acc = orjson.loads((idx / "acc" / "s1.json").read_bytes())
    assert acc["acc"]["c"]["prompts"] == 1 and acc["events"] == 1
    # grown by another process: counted on from the accumulator
    other = Store.open(store.workspace)
    other.append("s1", Kind.PROMPT, {"text": "y"})
    other.close()
    assert Store.open(store.workspace).stats("s1")["prompts"] == 2
    # a damaged accumulator or index entry: the session is counted again from its file
    (idx / "acc" / "s1.json").write_bytes(b'{"size": 1, "ino": 2, "lines": 1, "events": 1, '
                                          b'"head": null, "header": {}, "acc": {"c": 7}}')
    third = Store.open(store.workspace)
    third.append("s1", Kind.PROMPT, {"text": "z"})
    assert third.stats("s1")["prompts"] == 3
    third.close()
    data = orjson.loads((idx / "summaries.json").read_bytes())
    data["sessions"]["s1"]["header"] = {"id": 5}
    (idx / "summaries.json").write_bytes(orjson.dumps(data))
    assert [x.stats["prompts"] for x in Store.open(store.workspace).sessions()[0]] == [3]


def test_legacy_session_index_is_converted(store: Store) -> None:
    s = store.start_session(session_id="s1")
    store.append(s.id, Kind.PROMPT, {"text": "x"})
    store.sessions()
    store.close()
    idx = store.root / "index"
    summary = orjson.loads((idx / "summaries.json").read_bytes())["sessions"]["s1"]
    acc = orjson.loads((idx / "acc" / "s1.json").read_bytes())
    (idx / "sessions.json").write_bytes(orjson.dumps({"s1": {**acc, "stats": summary["stats"]}}))
    (idx / "summaries.json").unlink()
    (idx / "acc" / "s1.json").unlink()
    old = Store.open(store.workspace)
    assert old.sessions()[0][0].stats["prompts"] == 1
    old.close()
    assert not (idx / "sessions.json").exists() and (idx / "acc" / "s1.json").exists()
    newer = Store.open(store.workspace)
    newer.append("s1", Kind.PROMPT, {"text": "y"})
    assert newer.stats("s1")["prompts"] == 2


@pytest.mark.parametrize("planted", [
    {"startedAt": 5},  # sorted beside strings: the listing itself failed
    {"endedAt": ["x"]},
    {"prompts": "3\x1b[2J"},  # printed by `turnback session show`
    {"tokens": {"input": "x"}},
    {"tokens": None},
    {"events": 1.5},
])
def test_planted_summary_stats_are_counted_again(store: Store, planted: dict[str, object]) -> None:
    """An index entry whose stats are not what counting gives is dropped, never listed:
    the session is counted again from its file and the index written right."""
    for sid, ts in (("a", "2026-01-01T00:00:00.000Z"), ("b", "2026-01-02T00:00:00.000Z")):
        store.start_session(session_id=sid, started=ts)
        store.append(sid, Kind.PROMPT, {"text": "x"}, ts=ts)
    truth = [s.to_json() for s in store.sessions()[0]]
    store.close()
    path = store.root / "index" / "summaries.json"
    data = orjson.loads(path.read_bytes())
    data["sessions"]["a"]["stats"].update(planted)
    path.write_bytes(orjson.dumps(data))
    again = Store.open(store.workspace)
    assert [s.to_json() for s in again.sessions()[0]] == truth
    assert again.session_summary("a").to_json() == truth[1]
    again.close()
    assert orjson.loads(path.read_bytes())["sessions"]["a"]["stats"] == truth[1]["stats"]


@pytest.mark.parametrize("planted", [
    {"first": 5},  # compared with the next event's time: counting on failed
    {"c": {"prompts": "x"}},
    {"tokens": {"input": None}},
    {"byMessage": {"m": ["x", 1, 2, 3]}},
    {"byMessage": {"m": [1]}},
    {"responded": [1]},
    {"edited": "abc"},
    {"merge": 3},
    {"events": "9"},
])
def test_planted_accumulator_is_counted_from_the_start(store: Store,
                                                      planted: dict[str, object]) -> None:
    """A grown session's saved accumulator that is not what ``state`` writes is not counted
    on from: the session is counted from its first line, as if there were none."""
    store.start_session(session_id="s1")
    store.append("s1", Kind.PROMPT, {"text": "x"})
    store.append("s1", Kind.USAGE, {"input": 3, "output": 4, "messageId": "m"})
    store.sessions()
    store.close()
    acc_path = store.root / "index" / "acc" / "s1.json"
    snap = orjson.loads(acc_path.read_bytes())
    snap["acc"].update(planted)
    acc_path.write_bytes(orjson.dumps(snap))
    grower = Store.open(store.workspace)
    grower.append("s1", Kind.PROMPT, {"text": "y"})
    grower.close()
    fresh = Store.open(store.workspace)
    stats = fresh.stats("s1")
    fresh.close()
    assert stats["prompts"] == 2 and stats["events"] == 3
    assert stats["tokens"]["input"] == 3 and stats["tokens"]["output"] == 4


def test_sessions_written_names_every_session_this_store_wrote(store: Store) -> None:
    """What the server's kept listing summarizes again after its own write: every session
    the Store created, appended to, gave a head or meta line, and no other."""
    store.start_session(session_id="a")
    store.start_session(session_id="b")
    first = store.append("a", Kind.PROMPT, {"text": "x"})
    assert store.sessions_written() == {"a", "b"}
    assert store.sessions_written() == set()  # taken: each write is counted once
    store.update_session("b", title="renamed")
    assert store.sessions_written() == {"b"}
    store.append("a", Kind.RESPONSE, {"text": "y"})
    forked, _head = store.fork(first.id, "a")
    assert store.sessions_written() == {"a", forked}
    other = Store.open(store.workspace)  # another process's writes are the watcher's to report
    try:
        other.append("b", Kind.PROMPT, {"text": "z"})
    finally:
        other.close()
    store.session("b")
    store.sessions()
    assert store.sessions_written() == set()


def test_saved_counts_spare_a_killed_servers_successor_the_recount(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept listing refreshed session by session saves the refreshed sessions' counts
    (``save_session_counts``) though the store is never closed (a server killed): the next
    process counts such a session on from where the refresh stopped, not from the start."""
    import turnback.sessions.files as files

    store.start_session(session_id="s1")
    store.append("s1", Kind.PROMPT, {"text": "x"})
    store.sessions()
    store.close()  # the snapshot a long-lived server starts from
    server = Store.open(store.workspace)
    server.sessions()
    for i in range(5):  # hours of an agent's work, refreshed by name
        server.append("s1", Kind.PROMPT, {"text": f"more {i}"})
        assert server.session_summary("s1").stats["prompts"] == i + 2
        server.save_session_counts({"s1"})
    size = (store.root / "sessions" / "s1.jsonl").stat().st_size
    # killed: never closed, so summaries.json still holds the first snapshot
    starts: list[int] = []
    real = files.read_lines

    def read_lines(path: Path, start: int = 0, **kw: object) -> Iterator[object]:
        starts.append(start)
        return real(path, start=start, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "read_lines", read_lines)
    successor = Store.open(store.workspace)
    assert [s.stats["prompts"] for s in successor.sessions()[0]] == [6]
    successor.close()
    assert starts == [size], "counted again from an older snapshot"
