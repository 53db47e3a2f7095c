"""Damaged store files: operations name the damage precisely and keep what is good."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from turnback import Store, StoreDamaged, TurnbackError
from wsutil import (
    age_tree,
    corrupt_object,
    journal_left,
    picture,
    remove_object,
    truncate_object,
    write,
)

from .crashkit import tally


def count(case: str) -> None:
    tally("corrupt store files").add_case(case, True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    write(d, "big.bin", os.urandom(700_000))  # a loose object
    write(d, "small.txt", "small\n")  # packed
    write(d, "src/code.py", "print(1)\n")
    return d


def two_checkpoints(ws: Path) -> tuple[Store, str, str, str]:
    store = Store.open(ws)
    s = store.start_session(session_id="s1")
    store.append(s.id, "prompt", {"text": "go"})
    a = store.checkpoint(session_id=s.id)
    big = store.trees.lookup(a.tree, "big.bin")
    assert big is not None
    write(ws, "big.bin", os.urandom(700_000))
    write(ws, "small.txt", "changed\n")
    b = store.checkpoint(session_id=s.id)
    return store, a.id, b.id, big.hash


@pytest.mark.parametrize("damage", [corrupt_object, truncate_object, remove_object])
def test_damaged_blob_refused_before_the_workspace_changes(ws: Path, damage: object) -> None:
    store, a, _b, big = two_checkpoints(ws)
    damage(store, big)  # type: ignore[operator]
    store = Store.open(ws)
    before = picture(ws)
    with pytest.raises(TurnbackError) as info:
        store.rewind(a)
    assert big[:12] in info.value.message or "big.bin" in info.value.message
    assert picture(ws) == before
    assert not journal_left(store.root)
    store.rewind(a, ["small.txt", "src"])  # the intact files of that checkpoint
    assert (ws / "small.txt").read_text() == "small\n"
    assert Store.open(ws).session("s1").events  # sessions untouched
    rep = Store.open(ws).fsck()
    assert [d["id"] for d in rep.damaged if d["what"] == "checkpoint"] == [a]
    assert "big.bin" in next(d["problem"] for d in rep.damaged if d["what"] == "checkpoint")
    count(f"{damage.__name__.replace('_', ' ')}")  # type: ignore[attr-defined]


def test_garbage_object_file(ws: Path) -> None:
    store, a, _b, big = two_checkpoints(ws)
    store.objects.path(big).write_bytes(b"this is not zstd at all")
    rep = Store.open(ws).fsck()
    assert ("object", big) in [(d["what"], d["id"]) for d in rep.damaged]
    with pytest.raises(StoreDamaged, match="corrupt"):
        Store.open(ws).read_file(a, "big.bin")
    count("garbage object file")


def test_damaged_pack_index_keeps_the_store_working(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from turnback.objects import packs as packs_mod
    monkeypatch.setattr(packs_mod, "LOG_BYTES", 0)  # packs, as large checkpoints write
    store, _a, _b, _ = two_checkpoints(ws)
    age_tree(ws)
    store.checkpoint()  # the stat cache now trusts every file
    idx = sorted((store.root / "objects" / "pack").glob("*.idx"))[0]
    idx.write_bytes(idx.read_bytes()[:20])
    fresh = Store.open(ws)
    rep = fresh.fsck()  # fsck itself must run
    packs = [d for d in rep.damaged if d["what"] == "pack"]
    assert [d["id"] for d in packs] == [idx.stem] and "truncated" in packs[0]["problem"]
    cp = fresh.checkpoint()  # new checkpoints store again what the damaged pack held
    assert Store.open(ws).changes(cp.id) == []
    assert fresh.gc() is not None
    assert Store.open(ws).read_file(cp.id, "small.txt") == b"changed\n"
    count("truncated pack index")


def test_bad_lines_in_every_jsonl(ws: Path) -> None:
    store, a, b, _ = two_checkpoints(ws)
    write(ws, "small.txt", "again\n")
    store.rewind(a)
    root = store.root
    for rel in ("sessions/s1.jsonl", "checkpoints.jsonl", "oplog.jsonl"):
        with open(root / rel, "ab") as f:
            f.write(b"\x00\xffnot json\n")
    store.append("s1", "note", {"text": "after"})
    fresh = Store.open(ws)
    log = fresh.session("s1")
    assert [p.line for p in log.problems] == [len(log.events) + 1]  # header + events, then it
    assert {c.id for c in fresh.checkpoints()} >= {a, b}
    assert [op["op"] for op in fresh.log()] == ["rewind"]
    fresh.undo()  # the operation log's good lines still serve
    rep = fresh.fsck()
    assert {d["what"] for d in rep.damaged} == {"session", "checkpoint index"}
    count("bad JSONL lines (session, checkpoint index, operation log)")


def test_event_line_missing_fields(ws: Path) -> None:
    store, *_ = two_checkpoints(ws)
    with open(store.root / "sessions" / "s1.jsonl", "ab") as f:
        f.write(b'{"id": "e1", "kind": "note"}\n')
    log = Store.open(ws).session("s1")
    assert any("'session' is missing" in p.message for p in log.problems)
    assert len(log.events) >= 3
    count("event line missing fields")


@pytest.mark.parametrize(("content", "message"), [
    ({"formatVersion": 4}, "format version 4"),
    ({"formatVersion": "1"}, "formatVersion '1' is not a version number"),
    ({"formatVersion": 1, "size_cap_bytes": -5}, "size_cap_bytes"),
    ({"formatVersion": 1, "fsync": "sometimes"}, "fsync"),
    (None, "not valid JSON"),
    ([1, 2], "must hold a JSON object"),
])
def test_config_damage_named(ws: Path, content: object, message: str) -> None:
    store, _a, *_ = two_checkpoints(ws)
    cfg = store.root / "config.json"
    cfg.write_text("{oops" if content is None else json.dumps(content))
    with pytest.raises(StoreDamaged, match=message):
        Store.open(ws)
    objects_before = sorted(p.name for p in (store.root / "objects").rglob("*"))
    assert sorted(p.name for p in (store.root / "objects").rglob("*")) == objects_before
    count(f"config.json: {message}")


def test_garbage_journal_named(ws: Path) -> None:
    store, _a, *_ = two_checkpoints(ws)
    (store.root / "journal.json").write_bytes(b"{half\n")  # whole: its line is ended
    again = Store.open(ws)  # opens: fsck must be able to say what is wrong
    with pytest.raises(StoreDamaged, match=r"rewinds are refused.*interrupted rewind.*delete"):
        again.rewind(_a)
    report = again.fsck()
    assert [d["what"] for d in report.damaged] == ["rewind journal"]
    (store.root / "journal.json").unlink()
    again.rewind(_a)  # resolved
    count("garbage rewind journal")


def test_torn_journal_is_a_rewind_never_begun(ws: Path) -> None:
    """A journal without its line's end was cut while it was written (format 3 writes it
    in place): no file is touched before it is synced whole, so nothing was begun. It is
    emptied at the next open, and rewinds go ahead."""
    store, _a, *_ = two_checkpoints(ws)
    (store.root / "journal.json").write_bytes(b'{"id": "0123456789abcdef", "op": "rew')
    before = picture(ws)
    again = Store.open(ws)
    assert again.journal_problem is None and not journal_left(again.root)
    assert picture(ws) == before
    assert again.fsck().ok
    again.rewind(_a)
    count("torn rewind journal")


def test_caches_rebuilt_when_garbage(ws: Path) -> None:
    store, _a, b, _ = two_checkpoints(ws)
    store.sessions()
    store.close()
    (store.root / "cache" / "stat.json").write_bytes(b"garbage")
    (store.root / "index" / "summaries.json").write_bytes(b"[garbage")
    fresh = Store.open(ws)
    assert fresh.sessions()[1] == 1
    cp = fresh.checkpoint()
    assert fresh.changes(b, cp.id) == []
    count("garbage stat cache and session index")


def test_session_without_header_listed_as_damaged(ws: Path) -> None:
    store, *_ = two_checkpoints(ws)
    (store.root / "sessions" / "broken.jsonl").write_bytes(b'{"id": "x"}\n')
    fresh = Store.open(ws)
    assert {s.header.id for s in fresh.sessions()[0]} == {"s1"}
    rep = fresh.fsck()
    assert ("session", "broken") in [(d["what"], d["id"]) for d in rep.damaged]
    count("session file without header")


def test_after_fsck_the_next_checkpoint_stores_a_missing_object_again(ws: Path) -> None:
    """The stat cache must not keep pointing new checkpoints at a missing object."""
    age_tree(ws)  # old enough for the stat cache to trust them
    store = Store.open(ws)
    cp = store.checkpoint()
    blob = store.trees.lookup(cp.tree, "src/code.py")
    assert blob is not None
    remove_object(store, blob.hash)
    fresh = Store.open(ws)
    assert [d["id"] for d in fresh.fsck().damaged] == [cp.id]
    nxt = fresh.checkpoint()
    again = Store.open(ws)
    assert again.read_file(nxt.id, "src/code.py") == b"print(1)\n"
    assert [d["id"] for d in again.fsck().damaged] == []  # stored again: cp is whole too
    count("next checkpoint after fsck stores a missing object again")
