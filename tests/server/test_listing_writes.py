"""The server's own writes keep its session listing: each is refreshed by the sessions it wrote.

Every write the server runs (``TurnbackServer.write``, and a rewind's recording after
its answer) changes session files only through the store's session calls, which the
store counts (``Store.sessions_written``). So a rewind, an undo, an import, a pull, a
fork, a gc, a push that forgets or a delete leave the kept listing in place with just
the sessions they wrote marked to be summarized again, and the next ``turnback/sessions``
pages at once instead of listing every session. Before, each of them dropped the whole
listing (84–306 ms for 10,000 sessions, bench/RESULTS.md). Whatever the write, the
listing handed out afterwards must be exactly what a fresh process lists.

In-process: the server's class and a folder whose listing is trusted (as with a precise
watcher running), no client.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnback import Kind, Store
from turnback.importers import import_source
from turnback.server.core import TurnbackServer
from turnback.server.workspace.folders import Folder
from turnback.server.workspace.listing import ListingCache
from turnback.server.workspace.settings import Settings

from .conftest import fresh_listing, plain_listing

CLAUDE_LINES = (
    '{"type":"user","message":{"role":"user","content":"fix the bug"},"uuid":"u1",'
    '"parentUuid":null,"sessionId":"cc1","timestamp":"2026-02-01T00:00:00.000Z","cwd":"/x"}\n'
    '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}]},'
    '"uuid":"u2","parentUuid":"u1","sessionId":"cc1","timestamp":"2026-02-01T00:00:01.000Z",'
    '"cwd":"/x"}\n'
)


@pytest.fixture
def folder(store: Store) -> Folder:
    """The workspace with three sessions (one with a checkpoint between its prompts)."""
    ws = store.workspace
    for i in range(3):
        sid = f"s{i}"
        store.start_session(title=f"run {sid}", agent="codex", session_id=sid,
                            started=f"2026-01-0{i + 1}T00:00:00.000Z")
        store.append(sid, Kind.PROMPT, {"text": "first"})
    (ws / "a.txt").write_text("one\n")
    store.checkpoint(session_id="s1", label="one")
    (ws / "a.txt").write_text("two\n")
    store.append("s1", Kind.PROMPT, {"text": "second"})
    f = Folder(ws.as_uri(), ws, Settings())
    f.store = store
    f.listing = ListingCache(lambda: True)  # as when a precise watcher covers the store
    return f


def _write(ls: TurnbackServer, folder: Folder, fn: Callable[[Store], Any],
           after: Callable[[Store], None] | None = None) -> None:
    """``fn`` as a request runs it: through the server's write, then its ``after`` done."""

    async def go() -> None:
        await ls.write(folder, fn, after=after)
        while ls._tasks:  # the rewind's recording, run once the answer is on its way
            await asyncio.gather(*list(ls._tasks))

    asyncio.run(go())


def _kept_then_refreshed(ls: TurnbackServer, folder: Folder, fn: Callable[[Store], Any],
                         after: Callable[[Store], None] | None = None) -> list[Any]:
    """Run the write on a kept listing; it must be refreshed, not listed again in full."""
    store = folder.store
    assert store is not None
    cache = folder.listing
    cache.sessions(store)
    _write(ls, folder, fn, after)
    listed = plain_listing(cache.sessions(store))
    assert cache.refreshes == 1, "the write dropped the kept listing"
    assert listed == fresh_listing(store.workspace)
    return listed


def _kept_as_is(ls: TurnbackServer, folder: Folder, fn: Callable[[Store], Any]) -> None:
    """A write that writes no session file leaves the kept listing as it was."""
    store = folder.store
    assert store is not None
    cache = folder.listing
    before = cache.sessions(store)
    _write(ls, folder, fn)
    assert cache.peek() is before, "the write dropped the kept listing"
    assert plain_listing(before) == fresh_listing(store.workspace)


def _checkpoint_of(store: Store, label: str) -> str:
    return next(c.id for c in store.checkpoints() if c.label == label)


def test_a_rewind_of_files_refreshes_what_it_wrote(server: TurnbackServer, folder: Folder
                                                   ) -> None:
    def rewind(store: Store) -> Any:
        return store.rewind(_checkpoint_of(store, "one"), mode="both", finish_later=True)

    _kept_then_refreshed(server, folder, rewind, after=Store.finish_rewind)
    assert (folder.path / "a.txt").read_text() == "one\n"


def test_a_rewind_of_the_conversation_refreshes_its_session(server: TurnbackServer,
                                                            folder: Folder) -> None:
    def rewind(store: Store) -> Any:
        return store.rewind(_checkpoint_of(store, "one"), mode="conversation")

    listed = _kept_then_refreshed(server, folder, rewind, after=Store.finish_rewind)
    assert next(s for s in listed if s["id"] == "s1")["head"] is not None


def test_an_undo_refreshes_what_it_wrote(server: TurnbackServer, folder: Folder) -> None:
    store = folder.store
    assert store is not None
    store.rewind(_checkpoint_of(store, "one"), mode="both")
    _kept_then_refreshed(server, folder, lambda s: s.undo(finish_later=True),
                         after=Store.finish_rewind)
    assert (folder.path / "a.txt").read_text() == "two\n"


def test_an_import_refreshes_the_sessions_it_wrote(server: TurnbackServer, folder: Folder,
                                                   tmp_path: Path) -> None:
    source = tmp_path / "cc.jsonl"
    source.write_text(CLAUDE_LINES)
    listed = _kept_then_refreshed(
        server, folder, lambda s: import_source(s, "claude-code", source))
    assert "cc1" in [s["id"] for s in listed]


def test_a_fork_refreshes_its_session(server: TurnbackServer, folder: Folder) -> None:
    store = folder.store
    assert store is not None
    first = store.session("s0").events[0].id
    store.append("s0", Kind.RESPONSE, {"text": "later"})
    listed = _kept_then_refreshed(server, folder, lambda s: s.fork(first, "s0"))
    assert next(s for s in listed if s["id"] == "s0")["head"] == first


def test_a_gc_keeps_the_listing(server: TurnbackServer, folder: Folder) -> None:
    _kept_as_is(server, folder, lambda s: s.gc(keep_last=1))


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_push_forget_and_delete_keep_the_listing_and_a_pull_refreshes(
        server: TurnbackServer, folder: Folder, tmp_path: Path) -> None:
    from turnback.sharing.operations import delete, pull, push

    bare = tmp_path / "team.git"
    _git("init", "--quiet", "--bare", str(bare))
    _kept_as_is(server, folder, lambda s: push(s, str(bare), forget=["s2"]))
    _kept_as_is(server, folder, lambda s: delete(s, str(bare)))
    other_ws = tmp_path / "other"
    other_ws.mkdir()
    with Store.open(other_ws, create=True) as other:  # another machine's history to pull
        other.start_session(title="theirs", agent="codex", session_id="t0",
                            started="2026-03-01T00:00:00.000Z")
        other.append("t0", Kind.PROMPT, {"text": "theirs"})
        push(other, str(bare))
    listed = _kept_then_refreshed(server, folder, lambda s: pull(s, str(bare)))
    assert any(s["id"].startswith("t0@") for s in listed)
