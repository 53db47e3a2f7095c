"""Undo, undo of undo, and the conversation / both modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Conflict, Kind, Store
from wsutil import picture, write


def test_undo_and_undo_of_undo(store: Store, ws: Path) -> None:
    write(ws, "f", "v1")
    write(ws, "g", "g1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    write(ws, "h", "created")
    changed = picture(ws)
    store.rewind(cp.id)
    rewound = picture(ws)
    assert (ws / "f").read_text() == "v1" and not (ws / "h").exists()
    res = store.undo()
    assert picture(ws) == changed
    assert "h" in res.created and "f" in res.written
    store.undo()  # undo of the undo: redo
    assert picture(ws) == rewound
    store.undo()
    assert picture(ws) == changed
    ops = [op["op"] for op in store.log()]
    assert ops == ["rewind", "undo", "undo", "undo"]


def test_undo_dry_run_and_nothing_to_undo(store: Store, ws: Path) -> None:
    with pytest.raises(Conflict, match="nothing to undo"):
        store.undo()
    write(ws, "f", "1")
    cp = store.checkpoint()
    write(ws, "f", "2")
    store.rewind(cp.id)
    before = picture(ws)
    res = store.undo(dry_run=True)
    assert res.dry_run and res.written == ["f"]
    assert picture(ws) == before


def test_undo_of_paths_rewind_touches_only_those_paths(store: Store, ws: Path) -> None:
    write(ws, "a", "a1")
    write(ws, "b", "b1")
    cp = store.checkpoint()
    write(ws, "a", "a2")
    write(ws, "b", "b2")
    store.rewind(cp.id, ["a"])
    write(ws, "b", "b3")  # edited after the rewind, outside its paths
    store.undo()
    assert (ws / "a").read_text() == "a2" and (ws / "b").read_text() == "b3"


def test_conversation_mode_moves_head_only(store: Store, ws: Path) -> None:
    s = store.start_session()
    p1 = store.append(s.id, Kind.PROMPT, {"text": "one"})
    write(ws, "f", "1")
    cp = store.checkpoint(session_id=s.id)
    store.append(s.id, Kind.PROMPT, {"text": "two"})
    write(ws, "f", "2")
    res = store.rewind(cp.id, mode="conversation")
    assert (ws / "f").read_text() == "2"  # files untouched
    assert res.head is not None
    ev = store.find_event(res.head, s.id)
    assert ev.kind == Kind.REWIND and ev.parent == cp.event_id
    assert [e.id for e in store.conversation(s.id)] == [p1.id, cp.event_id, res.head]
    nxt = store.append(s.id, Kind.PROMPT, {"text": "branch"})
    assert nxt.parent == res.head


def test_conversation_undo_restores_previous_head(store: Store, ws: Path) -> None:
    s = store.start_session()
    store.append(s.id, Kind.PROMPT, {"text": "one"})
    cp = store.checkpoint(session_id=s.id)
    last = store.append(s.id, Kind.PROMPT, {"text": "two"})
    store.rewind(cp.id, mode="conversation")
    store.undo()
    assert store.session(s.id).head == last.id


def test_both_mode_moves_files_and_head(store: Store, ws: Path) -> None:
    s = store.start_session()
    store.append(s.id, Kind.PROMPT, {"text": "one"})
    write(ws, "f", "1")
    cp = store.checkpoint(session_id=s.id)
    last = store.append(s.id, Kind.PROMPT, {"text": "two"})
    write(ws, "f", "2")
    res = store.rewind(cp.id, mode="both")
    assert (ws / "f").read_text() == "1"
    head = store.session(s.id).head
    assert head == res.head
    assert store.find_event(head or "", s.id).parent == cp.event_id
    undo = store.undo()
    assert (ws / "f").read_text() == "2"
    # the undo's event follows the head the rewind found (the safety checkpoint's event,
    # after the last event of the conversation as it was)
    op = [o for o in store.log() if o["op"] == "rewind"][-1]
    head = store.session(s.id).head
    assert head == undo.head and head is not None
    ev = store.find_event(head, s.id)
    assert ev.kind == Kind.REWIND and ev.parent == op["prevHead"]
    assert last.id in [e.id for e in store.conversation(s.id)]
    redo = store.undo()  # undo of the undo: files and conversation forward again
    assert (ws / "f").read_text() == "1"
    head = store.session(s.id).head
    assert head == redo.head and head is not None
    redo_op = store.log()[-1]
    assert store.find_event(head, s.id).parent == store.log()[-2]["prevHead"]
    assert redo_op["mode"] == "both"
    assert last.id not in [e.id for e in store.conversation(s.id)]


def test_conversation_dry_run(store: Store, ws: Path) -> None:
    s = store.start_session()
    store.append(s.id, Kind.PROMPT, {"text": "one"})
    cp = store.checkpoint(session_id=s.id)
    last = store.append(s.id, Kind.PROMPT, {"text": "two"})
    res = store.rewind(cp.id, mode="conversation", dry_run=True)
    assert res.dry_run and res.head == cp.event_id
    assert store.session(s.id).head == last.id


@pytest.mark.parametrize("perms", [0o600, 0o640, 0o664, 0o700, 0o750, 0o444, 0o755, 0o644])
def test_permission_bits_round_trip_through_rewind_and_undo(
    store: Store, ws: Path, perms: int
) -> None:
    """A 0600 key comes back 0600 (format 1 kept only the exec bit and gave back 0644)."""
    write(ws, "key", "secret")
    (ws / "key").chmod(perms)
    cp = store.checkpoint()
    (ws / "key").write_text("changed")
    (ws / "key").chmod(0o666)
    changed = picture(ws)
    store.rewind(cp.id)
    assert (ws / "key").stat().st_mode & 0o777 == perms
    assert (ws / "key").read_text() == "secret"
    store.undo()
    assert picture(ws) == changed
    assert (ws / "key").stat().st_mode & 0o777 == 0o666


def test_a_chmod_alone_is_a_change_and_is_undone(store: Store, ws: Path) -> None:
    write(ws, "run.sh", "echo hi")
    (ws / "run.sh").chmod(0o700)
    cp = store.checkpoint()
    (ws / "run.sh").chmod(0o755)
    res = store.rewind(cp.id)
    assert res.written == ["run.sh"]
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o700
    store.undo()
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o755


def test_a_format_1_store_is_read_and_upgraded(ws: Path) -> None:
    """Trees of format 1 hold only f and x; a store of that version opens, reads, rewinds."""
    import orjson

    from turnback.store.config import FORMAT_VERSION

    s = Store.open(ws)
    write(ws, "a", "1")
    cp = s.checkpoint()
    s.close()
    cfg = ws / ".turnback" / "config.json"
    data = orjson.loads(cfg.read_bytes())
    data["formatVersion"] = 1
    cfg.write_bytes(orjson.dumps(data))
    write(ws, "a", "2")
    with Store.open(ws) as again:
        assert again.format_version == FORMAT_VERSION == 3
        again.rewind(cp.id)
    assert (ws / "a").read_text() == "1"
    assert orjson.loads(cfg.read_bytes())["formatVersion"] == 3
