"""``turnback session list`` on a store with much to count: printed at once, like the server.

A store never listed (no ``index/``) with more than ``COUNT_BEFORE_ANSWER`` session bytes
to count prints every session from its header line (``Store.sessions_at_once``), marked
not counted, and counts nothing; ``--wait`` counts and prints the exact listing. The
bound is lowered here so that a few small sessions are "much to count".
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from turnback import Kind, Store
from turnback.cli.main import cli
from turnback.store import session_ops


@pytest.fixture
def much(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store here has more bytes to count than a listing counts first."""
    monkeypatch.setattr(session_ops, "COUNT_BEFORE_ANSWER", 100)


def _store_never_listed(ws: Path) -> Path:
    """Three sessions whose header order differs from their first events' order: ``late``
    began (header) last but its first event is the oldest, as a session imported with
    its original start time can be. ``index/`` removed, as by another version."""
    with Store.open(ws, create=True) as store:
        for sid, started, prompts in (("a", "2026-01-01T00:00:00.000Z", 1),
                                      ("b", "2026-01-02T00:00:00.000Z", 2),
                                      ("late", "2026-01-03T00:00:00.000Z", 3)):
            store.start_session(title=f"run {sid}", agent="codex", session_id=sid,
                                started=started)
            for _ in range(prompts):
                store.append(sid, Kind.PROMPT, {"text": "x"})
        store.update_session("b", title="b renamed")
        store.end_session("b", "2026-01-02T05:00:00.000Z")
        root = store.root
    lines = (root / "sessions" / "late.jsonl").read_bytes().split(b"\n")
    for i, raw in enumerate(lines[1:], 1):  # its events dated before every other session
        if raw:
            v = orjson.loads(raw)
            v["ts"] = "2025-12-01T00:00:00.000Z"
            lines[i] = orjson.dumps(v)
    (root / "sessions" / "late.jsonl").write_bytes(b"\n".join(lines))
    shutil.rmtree(root / "index")
    return root


def _run(ws: Path, *args: str) -> str:
    res = CliRunner().invoke(cli, ["-C", str(ws), *args], prog_name="turnback")
    assert res.exit_code == 0, res.output
    return res.output


def test_a_store_with_much_to_count_lists_at_once_and_says_what_is_not_counted(
        ws: Path, much: None) -> None:
    root = _store_never_listed(ws)
    out = _run(ws, "session", "list")
    rows = out.splitlines()
    assert [r.split()[0] for r in rows[:3]] == ["late", "b", "a"]  # by the headers' start
    assert all("not counted" in r and "events" not in r for r in rows[:3])
    assert "b renamed" in rows[1]  # the meta line at the end of b's file, read
    assert rows[3].startswith("(3 of 3; 3 not counted yet") and "--wait" in rows[3]
    assert not (root / "index").exists()  # nothing counted, nothing written

    got = json.loads(_run(ws, "--json", "session", "list"))
    assert got["partial"] is True and got["total"] == 3
    by_id = {s["id"]: s for s in got["sessions"]}
    assert all(s["counted"] is False and s["events"] is None and s["stats"] is None
               for s in got["sessions"])
    assert by_id["b"]["title"] == "b renamed"
    assert by_id["b"]["endedAt"] == "2026-01-02T05:00:00.000Z"
    assert by_id["a"]["endedAt"] is None and by_id["a"]["startedAt"].startswith("2026-01-01")


def test_wait_counts_every_session_and_orders_by_first_events(ws: Path, much: None) -> None:
    root = _store_never_listed(ws)
    got = json.loads(_run(ws, "--json", "session", "list", "--wait"))
    assert "partial" not in got and got["total"] == 3
    assert [s["id"] for s in got["sessions"]] == ["b", "a", "late"]  # the counted order
    assert [s["events"] for s in got["sessions"]] == [2, 1, 3]
    assert all("counted" not in s for s in got["sessions"])
    assert got["sessions"][0]["title"] == "b renamed"
    assert (root / "index" / "summaries.json").exists()
    out = _run(ws, "session", "list")  # counted now: exact without --wait too
    assert "not counted" not in out and out.splitlines()[-1] == "(3 of 3)"


def test_query_offset_and_limit_page_the_partial_listing(ws: Path, much: None) -> None:
    _store_never_listed(ws)
    got = json.loads(_run(ws, "--json", "session", "list", "--offset", "1", "--limit", "1"))
    assert [s["id"] for s in got["sessions"]] == ["b"] and got["total"] == 3
    assert got["partial"] is True
    # as the full listing's query (and the server's partial answer): the latest title
    got = json.loads(_run(ws, "--json", "session", "list", "-q", "RENAMED"))
    assert [s["id"] for s in got["sessions"]] == ["b"] and got["total"] == 1
    assert got["sessions"][0]["title"] == "b renamed"
    got = json.loads(_run(ws, "--json", "session", "list", "-q", "RUN B"))
    assert got["sessions"] == [] and got["total"] == 0
    exact = json.loads(_run(ws, "--json", "session", "list", "--wait", "-q", "RUN B"))
    assert exact["sessions"] == [] and exact["total"] == 0


def test_a_small_store_never_listed_is_counted_as_before(ws: Path) -> None:
    """Under the bound (16 MiB) the listing counts first and is exact, as always."""
    root = _store_never_listed(ws)
    got = json.loads(_run(ws, "--json", "session", "list"))
    assert "partial" not in got and [s["events"] for s in got["sessions"]] == [2, 1, 3]
    assert (root / "index" / "summaries.json").exists()


def test_hostile_session_files_neither_block_nor_show_in_the_partial_listing(
        ws: Path, much: None, tmp_path: Path) -> None:
    """A FIFO (an open for reading would wait for a writer), a link out of the store, a
    first line past the bound, a header naming another session, and a garbage tail after
    a good header (shown from its header): the listing prints at once."""
    root = _store_never_listed(ws)
    folder = root / "sessions"
    os.mkfifo(folder / "fifo.jsonl")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b'{"type": "session", "id": "linked", "title": "t"}\n')
    (folder / "linked.jsonl").symlink_to(outside)
    (folder / "huge.jsonl").write_bytes(b'{"type": "session", "id": "huge", "title": "'
                                        + b"x" * (1 << 17) + b'"}\n')
    (folder / "other.jsonl").write_bytes(b'{"type": "session", "id": "a", "title": "fake"}\n')
    (folder / "tail.jsonl").write_bytes(
        b'{"type": "session", "id": "tail", "title": "kept", "started": "2026-02-01"}\n'
        + bytes(range(256)) * 32 + b'\n{"type": "meta", "title": 5}\n{"type": "meta", "tit')
    got = json.loads(_run(ws, "--json", "session", "list"))
    assert sorted(s["id"] for s in got["sessions"]) == ["a", "b", "late", "tail"]
    assert {s["id"]: s["title"] for s in got["sessions"]}["tail"] == "kept"
    assert {s["id"]: s["title"] for s in got["sessions"]}["a"] == "run a"


def test_record_picks_the_newest_open_session_without_counting(
        much: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``record`` with no ``--session`` on a store with much to count: the newest session
    whose end is not written (its end read from the meta line at its file's end) gets the
    event, and no session file but the one picked is counted for it."""
    from turnback.sessions.files import FileSessions

    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws, create=True) as store:
        for sid, started in (("older", "2026-01-01T00:00:00.000Z"),
                             ("ended", "2026-01-02T00:00:00.000Z")):
            store.start_session(title=f"run {sid}", agent="codex", session_id=sid,
                                started=started)
            store.append(sid, Kind.PROMPT, {"text": "x"})
        store.end_session("ended", "2026-01-02T05:00:00.000Z")
        root = store.root
    shutil.rmtree(root / "index")

    def counted(self: FileSessions) -> None:
        raise AssertionError("every session counted to pick one")

    monkeypatch.setattr(FileSessions, "summaries", counted)
    monkeypatch.delenv("TURNBACK_SESSION", raising=False)
    event_id = _run(ws, "record", "note", "--text", "picked").strip()
    lines = (root / "sessions" / "older.jsonl").read_text().splitlines()
    assert event_id in lines[-1] and "picked" in lines[-1]
    assert "picked" not in (root / "sessions" / "ended.jsonl").read_text()


def _own_and_newer(ws: Path, newer: str | None) -> Path:
    """An open session ``mine`` and a newer one made as ``newer`` says (its events later
    too); ``index/`` removed (a store never listed)."""
    from turnback.events import Event, SessionHeader

    with Store.open(ws, create=True) as store:
        store.start_session(title="mine", agent="codex", session_id="mine",
                            started="2026-01-01T00:00:00.000Z")
        store.append("mine", Kind.PROMPT, {"text": "x"}, ts="2026-01-01T00:00:01.000Z")
        if newer is None:
            pass
        elif newer == "pulled":  # as ``pull`` writes a teammate's open session
            store.backend.create(SessionHeader(
                "theirs@laptop", "theirs", "codex", None, "2026-01-05T00:00:00.000Z", None,
                "pulled", None, {"origin": {"machine": "laptop", "session": "theirs"}}))
            store.backend.append("theirs@laptop", lambda head, _ids: [Event(
                "e1", "theirs@laptop", head, "2026-01-05T00:00:01.000Z", Kind.PROMPT,
                {"text": "z"})])
        else:  # ended, then events recorded into it: its end is far from its file's end
            store.start_session(title="ended", agent="codex", session_id="ended",
                                started="2026-01-05T00:00:00.000Z")
            store.end_session("ended", "2026-01-05T01:00:00.000Z")
            for _ in range(40):
                store.append("ended", Kind.PROMPT, {"text": "y" * 200},
                             ts="2026-01-05T02:00:00.000Z")
        root = store.root
    shutil.rmtree(root / "index")
    return root


@pytest.mark.parametrize("count", ["much", "little"])
@pytest.mark.parametrize("newer", ["pulled", "ended long ago"])
def test_record_picks_neither_a_pulled_session_nor_one_ended_before_its_last_events(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: str, newer: str) -> None:
    """Red-team (branch redteam11): ``record`` without ``--session`` appends to the user's
    own newest open session. A newer session pulled from a teammate (read-only) made
    every such ``record`` fail; one ended before more than ``TAIL`` bytes of events (its
    end not among its last meta lines) was taken as open on a store with much to count,
    though the full listing says it ended."""
    if count == "much":
        monkeypatch.setattr(session_ops, "COUNT_BEFORE_ANSWER", 100)
    ws = tmp_path / "ws"
    ws.mkdir()
    root = _own_and_newer(ws, newer)
    monkeypatch.delenv("TURNBACK_SESSION", raising=False)
    event_id = _run(ws, "record", "note", "--text", "picked").strip()
    assert event_id in (root / "sessions" / "mine.jsonl").read_text().splitlines()[-1]
    for other in ("theirs@laptop", "ended"):
        path = root / "sessions" / f"{other}.jsonl"
        assert not path.exists() or "picked" not in path.read_text()


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_record_picks_no_session_file_that_is_a_fifo_or_a_link(
        much: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str) -> None:
    """Red-team (branch redteam11): a session file planted as a FIFO or as a link to a
    file outside (whose header would be the newest) is neither read nor appended to."""
    ws = tmp_path / "ws"
    ws.mkdir()
    root = _own_and_newer(ws, None)
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(orjson.dumps({"type": "session", "id": "planted", "title": "p",
                                      "started": "2026-02-01T00:00:00.000Z"}) + b"\n")
    if plant == "fifo":
        os.mkfifo(root / "sessions" / "planted.jsonl")
    else:
        (root / "sessions" / "planted.jsonl").symlink_to(outside)
    before = outside.read_bytes()
    monkeypatch.delenv("TURNBACK_SESSION", raising=False)
    event_id = _run(ws, "record", "note", "--text", "picked").strip()
    assert event_id in (root / "sessions" / "mine.jsonl").read_text().splitlines()[-1]
    assert outside.read_bytes() == before


def test_record_does_not_count_a_big_session_to_pick_it(
        much: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team (branch redteam11): a newest session with more than ``COUNT_TO_PICK``
    bytes not counted (a planted sparse file of 1 GiB: 4.5 s and 2 GB to count) is not
    counted to pick it: its last lines alone say it is open."""
    from turnback.sessions.files import FileSessions

    ws = tmp_path / "ws"
    ws.mkdir()
    root = _own_and_newer(ws, None)
    big = root / "sessions" / "big.jsonl"
    big.write_bytes(orjson.dumps({"type": "session", "id": "big", "title": "b",
                                  "started": "2026-02-01T00:00:00.000Z"}) + b"\n")
    os.truncate(big, 4096)
    monkeypatch.setattr(session_ops, "COUNT_TO_PICK", 1024)

    def counted(self: FileSessions, session_id: str) -> None:
        raise AssertionError(f"{session_id} counted to pick it")

    monkeypatch.setattr(FileSessions, "summary", counted)
    with Store.open(ws) as store:
        assert store.newest_open_session() == "big"
        monkeypatch.setattr(session_ops, "COUNT_TO_PICK", 1 << 20)
        with pytest.raises(AssertionError, match="big counted"):
            store.newest_open_session()
