"""A server that has just started answers ``turnback/sessions`` from the saved first page.

The full listing of a large store (every session file stat-ed, the summary index parsed;
minutes when the index is missing) runs behind that answer, which says ``partial``; when
it is done a ``turnback/didChange`` tells the client to ask again, and the answer is then
the full listing's, as another process lists it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from turnback import Kind, Store

from .conftest import started


def _prompts(listed: dict[str, object], sid: str) -> int:
    sessions = listed["sessions"]
    assert isinstance(sessions, list)
    return int(next(s for s in sessions if s["id"] == sid)["stats"]["prompts"])


async def test_the_saved_page_first_then_the_full_listing(ws: Path) -> None:
    with Store.open(ws, create=True) as store:
        for i in range(3):
            sid = f"s{i}"
            store.start_session(title=f"run {i}", agent="codex", session_id=sid,
                                started=f"2026-01-0{i + 1}T00:00:00.000Z")
            store.append(sid, Kind.PROMPT, {"text": "first"})
        store.sessions()  # index/first.json: the page as this listing saw it
        store.append("s0", Kind.PROMPT, {"text": "after the listing"})
    async with started(ws) as client:
        since = len(client.changes)
        first = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert first["partial"] is True and first["total"] == 3
        assert [s["id"] for s in first["sessions"]] == ["s2", "s1", "s0"]
        assert _prompts(first, "s0") == 1  # as saved: not checked against the files
        await client.wait_change(lambda p: p["sessions"] == [] and not p["checkpoints"],
                                 since=since)
        full = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert "partial" not in full and full["total"] == 3
        assert _prompts(full, "s0") == 2
    with Store.open(ws) as store:  # the server's close saved what it listed last
        saved = store.first_sessions()
        assert saved is not None and _prompts(
            {"sessions": [s.to_json() for s in saved[0]]}, "s0") == 2


async def test_a_query_or_a_page_past_the_saved_one_is_listed_in_full(ws: Path) -> None:
    with Store.open(ws, create=True) as store:
        store.start_session(title="run", agent="codex", session_id="s0")
        store.sessions()
    async with started(ws) as client:
        got = await client.call("turnback/sessions", {"query": "run"})
        assert "partial" not in got and got["total"] == 1
    async with started(ws) as client:
        got = await client.call("turnback/sessions", {})  # every session: no limit
        assert "partial" not in got and got["total"] == 1


async def test_a_failed_first_listing_leaves_no_partial_answer_for_ever(ws: Path) -> None:
    """The full listing behind the first partial answer fails (here ``sessions/`` is no
    folder: a sync half done, a disk error); the user mends it. The client's next asks
    must list in full, not answer the saved page again with nothing behind it."""
    with Store.open(ws, create=True) as store:
        store.start_session(title="run", agent="codex", session_id="s0")
        store.sessions()  # index/first.json
        folder = store.root / "sessions"
    away = folder.with_name("sessions.away")
    folder.rename(away)
    folder.write_bytes(b"")  # the listing fails: not a folder
    async with started(ws) as client:
        since = len(client.changes)
        first = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert first["partial"] is True
        await client.wait_change(lambda p: p["sessions"] == [] and not p["checkpoints"],
                                 since=since)
        with pytest.raises(Exception, match="Not a directory"):  # named, not the saved page
            await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        folder.unlink()  # mended, with a session more
        away.rename(folder)
        kept = (folder / "s0.jsonl").read_bytes()
        (folder / "s1.jsonl").write_bytes(kept.replace(b'"s0"', b'"s1"'))
        again = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert "partial" not in again  # before: partial, from the saved page, for ever
        assert sorted(s["id"] for s in again["sessions"]) == ["s0", "s1"]


async def test_a_saved_session_that_is_gone_is_not_read_or_made(ws: Path) -> None:
    """A saved page naming a session whose file is gone (removed, or the page copied from
    another store): the partial answer lists it, asking for it finds nothing and makes
    nothing, and the full listing behind it drops it."""
    with Store.open(ws, create=True) as store:
        for sid in ("s0", "ghost"):
            store.start_session(title=sid, agent="codex", session_id=sid)
        store.sessions()
        gone = store.root / "sessions" / "ghost.jsonl"
    gone.unlink()
    async with started(ws) as client:
        since = len(client.changes)
        first = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert first["partial"] is True and "ghost" in [s["id"] for s in first["sessions"]]
        with pytest.raises(Exception, match="no session 'ghost'"):
            await client.call("turnback/session", {"sessionId": "ghost"})
        assert not gone.exists()
        await client.wait_change(lambda p: p["sessions"] == [] and not p["checkpoints"],
                                 since=since)
        full = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert [s["id"] for s in full["sessions"]] == ["s0"] and full["total"] == 1


def _big_unlisted_store(ws: Path) -> None:
    """A store that was never listed (no ``index/``: another version's, pulled, or its
    ``index/`` deleted) with more session bytes to count than a first answer waits for."""
    from turnback.store.facade import COUNT_BEFORE_ANSWER

    with Store.open(ws, create=True) as store:
        for i, sid in enumerate(("a", "b")):
            store.start_session(title=f"run {sid}", agent="codex", session_id=sid,
                                started=f"2026-01-0{i + 1}T00:00:00.000Z")
            store.append(sid, Kind.PROMPT, {"text": "first"})
        store.update_session("b", title="b renamed")  # a meta line ends b's file
        store.start_session(title="long run", agent="claude-code", session_id="big",
                            started="2026-01-03T00:00:00.000Z")
        root = store.root
    line = {"session": "big", "parent": None, "ts": "2026-01-03T00:00:01.000Z",
            "kind": "prompt", "data": {"text": "y" * 1000}}
    n = COUNT_BEFORE_ANSWER // 1000 + 100
    with (root / "sessions" / "big.jsonl").open("ab") as f:
        f.write(b"".join(orjson.dumps({**line, "id": f"e{i}"}) + b"\n" for i in range(n)))
    shutil.rmtree(root / "index")


async def test_a_big_store_never_listed_answers_its_header_lines_first(ws: Path) -> None:
    """No ``index/first.json`` to answer from and more bytes to count than the first
    answer may wait for: every session from its header line, counts said not known,
    marked partial; then the didChange, and the counted listing."""
    _big_unlisted_store(ws)
    async with started(ws) as client:
        since = len(client.changes)
        first = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert first["partial"] is True and first["total"] == 3
        assert [s["id"] for s in first["sessions"]] == ["big", "b", "a"]
        big = first["sessions"][0]
        assert big["title"] == "long run" and big["agent"] == "claude-code"
        assert big["startedAt"] == "2026-01-03T00:00:00.000Z"
        assert big["counted"] is False and big["events"] is None and big["stats"] is None
        assert first["sessions"][1]["title"] == "b renamed"  # its file's last meta line
        await client.wait_change(lambda p: p["sessions"] == [] and not p["checkpoints"],
                                 since=since, timeout=60)
        full = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert "partial" not in full and full["total"] == 3
        assert all("counted" not in s for s in full["sessions"])
        # counted, a session is placed by its first event's time (a and b's: today), not
        # its header's: the order may change with the full answer (docs/PROTOCOL.md)
        assert [s["id"] for s in full["sessions"]] == ["b", "a", "big"]
        big = full["sessions"][2]
        assert big["events"] > 16_000 and big["stats"]["prompts"] > 16_000


async def test_a_small_store_never_listed_is_listed_in_full_at_once(ws: Path) -> None:
    """Few bytes to count (a new store, a small one): the first answer is the counted
    listing, as before; nothing partial, so read-your-writes is exact from the start."""
    with Store.open(ws, create=True) as store:
        store.start_session(title="run", agent="codex", session_id="s0")
        store.append("s0", Kind.PROMPT, {"text": "first"})
        root = store.root
    shutil.rmtree(root / "index")
    async with started(ws) as client:
        got = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert "partial" not in got and got["sessions"][0]["stats"]["prompts"] == 1


async def test_the_servers_own_write_shows_counted_in_the_next_answer(ws: Path) -> None:
    """Read-your-writes while the first listing may still be counting: a checkpoint the
    server records in a session shows in its next answer, counted, whether that answer
    is still the partial one or already the full listing's; a query too."""
    _big_unlisted_store(ws)
    async with started(ws) as client:
        first = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert first["partial"] is True
        await client.call("turnback/createCheckpoint", {"sessionId": "a"})
        await client.call("turnback/createCheckpoint", {})  # a new session: "workspace"
        for params in ({"offset": 0, "limit": 200}, {"query": "u"}):
            got = await client.call("turnback/sessions", params)
            shown = {s["id"]: s for s in got["sessions"]}
            assert shown["a"]["stats"]["checkpoints"] == 1 and shown["a"]["stats"]["prompts"] == 1
            assert shown["workspace"]["stats"]["checkpoints"] == 1


async def test_hostile_session_files_do_not_stop_the_first_answer(ws: Path, tmp_path: Path
                                                                  ) -> None:
    """A FIFO, a link, a first line past the bound and garbage among the session files of
    a big unlisted store: the partial answer leaves them out (opening the FIFO to read
    would have blocked a reads thread for good), the server answers on."""
    _big_unlisted_store(ws)
    sessions = ws / ".turnback" / "sessions"
    os.mkfifo(sessions / "fifo.jsonl")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b'{"type": "session", "id": "linked"}\n')
    (sessions / "linked.jsonl").symlink_to(outside)
    (sessions / "huge.jsonl").write_bytes(b'{"type": "session", "id": "huge", "title": "'
                                          + b"x" * (1 << 17) + b'"}\n')
    (sessions / "garbage.jsonl").write_bytes(b"\xff\x00\n")
    async with started(ws) as client:
        since = len(client.changes)
        first = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert first["partial"] is True
        assert sorted(s["id"] for s in first["sessions"]) == ["a", "b", "big"]
        await client.wait_change(lambda p: p["sessions"] == [] and not p["checkpoints"],
                                 since=since, timeout=60)
        full = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        assert "partial" not in full and "a" in [s["id"] for s in full["sessions"]]


async def test_a_write_before_the_first_answer_is_not_hidden_by_the_saved_page(ws: Path
                                                                               ) -> None:
    """The saved first page is as the last full listing left it: answered after this
    server's own write (an agent's hook handed over, a checkpoint in a session), it showed
    the session without that write, for as long as the listing behind it ran."""
    with Store.open(ws, create=True) as store:
        store.start_session(title="run", agent="codex", session_id="s0")
        store.append("s0", Kind.PROMPT, {"text": "first"})
        store.sessions()  # index/first.json
    async with started(ws) as client:
        await client.call("turnback/createCheckpoint", {"sessionId": "s0"})
        got = await client.call("turnback/sessions", {"offset": 0, "limit": 200})
        s0 = next(s for s in got["sessions"] if s["id"] == "s0")
        assert s0["stats"]["checkpoints"] == 1  # before: 0, from the saved page
