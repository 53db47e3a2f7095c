"""``index/first.json``: the newest sessions as the last full listing saved them.

What a server that has just started answers its first ``turnback/sessions`` from. It is
input like every file of the store: a planted or damaged one is not used (the listing is
then made in full), never a traceback, never a wrong summary handed on.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from turnback import Kind, Store
from turnback.sessions import first_page


def _sessions(store: Store, n: int) -> None:
    for i in range(n):
        sid = f"s{i:02d}"
        store.start_session(title=f"run {i}", agent="codex", session_id=sid,
                            started=f"2026-01-01T00:00:{i:02d}.000Z")
        store.append(sid, Kind.PROMPT, {"text": "x"})


def _first(store: Store) -> Path:
    return store.root / "index" / "first.json"


def test_a_full_listing_saves_its_first_page(store: Store, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.setattr(first_page, "COUNT", 5)
    _sessions(store, 8)
    listed = store.sessions()[0]
    store.sessions(query="no such session")  # a query does not change what is saved
    other = Store.open(store.workspace)
    try:
        got = other.first_sessions()
        assert got is not None
        items, total = got
        assert total == 8
        assert [s.to_json() for s in items] == [s.to_json() for s in listed[:5]]
    finally:
        other.close()


def test_nothing_saved_is_none(store: Store) -> None:
    _sessions(store, 2)
    assert store.first_sessions() is None


@pytest.mark.parametrize("plant", [
    b"not json",
    b"[]",
    b'{"format": 2, "total": 1, "sessions": []}',
    b'{"format": 1, "total": "1", "sessions": []}',
    b'{"format": 1, "total": 0, "sessions": "x"}',
    "fewer-total", "header-id", "stats-type", "no-files-edited", "events-negative", "head-int",
    "duplicate", "not-a-dict", "header-not-dict", "events-bool", "total-bool", "total-huge",
])
def test_a_planted_file_is_not_used(store: Store, plant: bytes | str) -> None:
    _sessions(store, 3)
    listed = [s.to_json() for s in store.sessions()[0]]
    path = _first(store)
    doc = orjson.loads(path.read_bytes())
    entry = doc["sessions"][0]
    if isinstance(plant, bytes):
        data = plant
    else:
        if plant == "fewer-total":
            doc["total"] = 1
        elif plant == "header-id":
            entry["header"]["id"] = "../../x"
        elif plant == "stats-type":
            entry["stats"]["prompts"] = "many"
        elif plant == "no-files-edited":
            del entry["stats"]["filesEdited"]
        elif plant == "events-negative":
            entry["events"] = -1
        elif plant == "head-int":
            entry["head"] = 5
        elif plant == "duplicate":
            doc["sessions"][1] = entry
        elif plant == "not-a-dict":
            doc["sessions"][1] = 5
        elif plant == "events-bool":
            entry["events"] = True
        elif plant == "total-bool":
            doc["total"] = True
            doc["sessions"] = doc["sessions"][:1]
        elif plant == "total-huge":  # past 64 bits: orjson reads it as a float
            data = orjson.dumps(doc).replace(b'"total":3', b'"total":' + b"9" * 30)
            assert b"9" * 30 in data
        elif plant == "header-not-dict":
            entry["header"] = ["s00"]
        if plant != "total-huge":
            data = orjson.dumps(doc)
    path.write_bytes(data)
    other = Store.open(store.workspace)
    try:
        assert other.first_sessions() is None
        assert [s.to_json() for s in other.sessions()[0]] == listed  # and it is written again
        assert other.first_sessions() is not None
    finally:
        other.close()


def test_a_link_or_a_huge_file_is_not_read(store: Store, tmp_path: Path) -> None:
    _sessions(store, 2)
    store.sessions()
    path = _first(store)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(elsewhere)
    assert store.first_sessions() is None
    path.unlink()
    with path.open("wb") as f:
        f.truncate(first_page.MAX_BYTES + 1)
    assert store.first_sessions() is None


def test_a_store_replaced_under_it_gets_nothing(store: Store) -> None:
    """A server closing a store that was replaced since it opened it (``mv .turnback old``
    and a new store) must not save its listing into the new one."""
    _sessions(store, 2)
    listed = store.sessions()[0]
    (store.root / "index" / "first.json").unlink()
    store.root.rename(store.root.with_name("old-store"))
    with Store.open(store.workspace, create=True) as new:
        (new.root / "index").mkdir(exist_ok=True)  # as after the new store's first listing
        store.save_first_sessions(listed[:1])  # not what it saved before (else not written)
        assert not (new.root / "index" / "first.json").exists()
        assert new.first_sessions() is None
