"""The server's kept session listing, brought up to date session by session.

Whatever the watcher reports, the listing the cache hands out must be exactly
what a fresh ``Store.sessions`` lists (order, counts, stats): the refresh of the
named sessions is only a shorter way to the same answer.
"""

from __future__ import annotations

from typing import Any

import orjson

from turnback import Kind, Store
from turnback.server.workspace.listing import ListingCache

from .conftest import fresh_listing, plain_listing


def _session(store: Store, sid: str, started: str, prompts: int) -> None:
    store.start_session(title=f"run {sid}", agent="codex", session_id=sid, started=started)
    for i in range(prompts):
        store.append(sid, Kind.PROMPT, {"text": f"{sid} {i}"}, ts=started)


def test_named_sessions_are_summarized_again_in_order(store: Store) -> None:
    ws = store.workspace
    for i in range(8):
        _session(store, f"s{i}", f"2026-01-0{i + 1}T00:00:00.000Z", 1)
    cache = ListingCache(lambda: True)
    assert plain_listing(cache.sessions(store)) == fresh_listing(ws)
    writer = Store.open(ws)  # another process's writes, as the watcher reports them
    try:
        writer.append("s3", Kind.PROMPT, {"text": "more"})
        _session(writer, "s9", "2026-01-04T12:00:00.000Z", 2)  # new, between s3 and s4
        _session(writer, "s0a", "2025-12-31T00:00:00.000Z", 1)  # new, the oldest
        (ws / ".turnback" / "sessions" / "s5.jsonl").unlink()  # removed
        # a session whose file no longer has a header line: left out, as a fresh listing does
        (ws / ".turnback" / "sessions" / "s6.jsonl").write_bytes(b"not a session\n")
        cache.changed({"s3", "s9", "s0a", "s5", "s6", "not an id"})
        assert cache.peek() is None  # stale: answered off the event loop, never as it was
        listed = plain_listing(cache.sessions(store))
        assert cache.refreshes == 1
        assert listed == fresh_listing(ws)
        ids = [s["id"] for s in listed]
        assert ids == ["s7", "s4", "s9", "s3", "s2", "s1", "s0", "s0a"]
        assert next(s for s in listed if s["id"] == "s3")["stats"]["prompts"] == 2
        # its count is on disk at once (a killed server's successor counts on from here)
        saved = orjson.loads((ws / ".turnback" / "index" / "acc" / "s3.json").read_bytes())
        assert saved["size"] == (ws / ".turnback" / "sessions" / "s3.jsonl").stat().st_size
        hits = cache.hits
        assert cache.peek() is not None and cache.hits == hits + 1  # kept again
    finally:
        writer.close()


def test_a_change_during_a_refresh_is_not_lost(store: Store) -> None:
    """A change reported while the listing is being made leaves it to be made again."""
    for i in range(3):
        _session(store, f"s{i}", f"2026-01-0{i + 1}T00:00:00.000Z", 1)
    cache = ListingCache(lambda: True)
    cache.sessions(store)
    store.append("s1", Kind.PROMPT, {"text": "more"})
    cache.changed({"s1"})
    real = store.session_summary

    def summary_then_change(sid: str) -> Any:
        out = real(sid)
        store.append("s2", Kind.PROMPT, {"text": "meanwhile"})
        cache.changed({"s2"})
        return out

    store.session_summary = summary_then_change  # type: ignore[method-assign]
    try:
        cache.sessions(store)
    finally:
        del store.session_summary
    assert cache.peek() is None
    assert plain_listing(cache.sessions(store)) == fresh_listing(store.workspace)


def test_an_unnamed_change_or_no_watcher_lists_in_full(store: Store) -> None:
    _session(store, "s0", "2026-01-01T00:00:00.000Z", 1)
    trusted = [True]
    cache = ListingCache(lambda: trusted[0])
    cache.sessions(store)
    cache.changed(set())  # a change the watcher could not name: everything again
    assert cache.peek() is None
    cache.sessions(store)
    assert cache.refreshes == 0
    trusted[0] = False  # the watcher stopped: nothing is kept
    cache.changed({"s0"})
    cache.sessions(store)
    assert cache.refreshes == 1 and cache.peek() is None
