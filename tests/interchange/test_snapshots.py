"""Whole-conversation snapshots: save/load round trips on both snapshot backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Kind, Store
from turnback.errors import InvalidInput, StoreDamaged
from turnback.interchange.conversation import (
    JsonFileSnapshotStore,
    MemorySnapshotStore,
    SnapshotStore,
    restore,
    snapshot,
)

_OPEN: list[Store] = []


def _memory() -> Store:
    store = Store.memory()
    _OPEN.append(store)
    return store


@pytest.fixture(autouse=True)
def _close_stores() -> Iterator[None]:
    """Store.memory() makes temporary folders; close() removes them."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def _session(store: Store) -> str:
    s = store.start_session(title="snap", agent="test")
    store.append(s.id, Kind.PROMPT, {"text": "hi"})
    store.append(s.id, Kind.RESPONSE, {"text": "hello", "messageId": "m1"})
    store.append(s.id, Kind.TOOL_CALL, {"name": "Bash", "input": {"command": "ls"}})
    return s.id


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_round_trip(tmp_path: Path, kind: str) -> None:
    backend: SnapshotStore = (MemorySnapshotStore() if kind == "memory"
                              else JsonFileSnapshotStore(tmp_path / "snap.json"))
    assert backend.load() is None
    src = _memory()
    sid = _session(src)
    backend.save(snapshot(src, sid))
    doc = backend.load()
    assert doc is not None and [m["role"] for m in doc["messages"]] == [
        "user", "assistant", "assistant"]
    dst = _memory()
    new_id = restore(dst, doc)
    got = [(e.kind, e.data) for e in dst.conversation(new_id)]
    want = [(e.kind, e.data) for e in src.conversation(sid)]
    assert got == want
    assert restore(dst, doc) == new_id
    assert len(dst.session(new_id).events) == 3  # loading twice adds nothing


def test_only_the_path_to_the_head_is_saved() -> None:
    store = _memory()
    sid = _session(store)
    first = store.session(sid).events[0]
    store.fork(first.id)
    store.append(sid, Kind.RESPONSE, {"text": "other branch"})
    texts = [m["content"] for m in snapshot(store, sid)["messages"]]
    assert texts == ["hi", "other branch"]


def test_bad_documents_are_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="version"):
        restore(_memory(), {"version": 9, "messages": []})
    with pytest.raises(InvalidInput, match="messages"):
        restore(_memory(), {"version": 1, "messages": "x"})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(StoreDamaged, match=r"bad\.json"):
        JsonFileSnapshotStore(bad).load()
