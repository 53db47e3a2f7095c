"""A rewind answered before it is recorded (``finish_later``): the journal holds it until
``finish_rewind``, every later write records it first, and a crash in between loses nothing."""

from __future__ import annotations

from pathlib import Path

from turnback import Kind, Store
from wsutil import keeps_replaced, second_names, write


def _rewound(store: Store, ws: Path) -> tuple[str, str | None]:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    write(ws, "new", "created after the checkpoint")
    res = store.rewind(cp.id, finish_later=True)
    assert (ws / "f").read_text() == "v1" and not (ws / "new").exists()
    return cp.id, res.head


def test_the_journal_holds_the_rewind_until_it_is_finished(store: Store, ws: Path) -> None:
    _cp, head = _rewound(store, ws)
    assert store.oplog.pending() is not None, "the files are in place, the journal still open"
    assert store.log() == []
    store.finish_rewind()
    assert store.oplog.pending() is None
    [op] = store.log()
    assert op["op"] == "rewind" and op["newHead"] == head
    sid = op["session"]
    assert store.session(sid).head == head
    store.finish_rewind()  # nothing left: a no-op
    assert len(store.log()) == 1


def test_a_later_write_records_the_rewind_first(store: Store, ws: Path) -> None:
    _cp, head = _rewound(store, ws)
    sid = store.checkpoints()[-1].session_id
    assert sid is not None
    ev = store.append(sid, Kind.NOTE, {"text": "after the rewind"})
    assert ev.parent == head, "the rewind's event comes first in the conversation"
    assert [op["op"] for op in store.log()] == ["rewind"]


def test_undo_right_after_an_unfinished_rewind_undoes_it(store: Store, ws: Path) -> None:
    _rewound(store, ws)
    store.undo()
    assert (ws / "f").read_text() == "v2" and (ws / "new").exists()
    assert [op["op"] for op in store.log()] == ["rewind", "undo"]


def test_a_crash_before_finishing_is_finished_by_the_next_open(store: Store, ws: Path) -> None:
    _cp, head = _rewound(store, ws)
    # the process dies here: no finish_rewind, no close
    again = Store.open(ws)
    assert again.oplog.pending() is None
    [op] = again.log()
    assert op["newHead"] == head
    assert (ws / "f").read_text() == "v1" and not (ws / "new").exists()
    store.finish_rewind()  # the first object's record is done already: not recorded twice
    assert len(again.log()) == 1
    again.undo()
    assert (ws / "f").read_text() == "v2"


def test_a_replaced_file_is_kept_by_a_temporary_name_until_the_rewind_is_finished(
        store: Store, ws: Path) -> None:
    """The rename over it does not free its blocks (the cost of a small rewind's renames on
    ext4); the unlink that does comes with finish_rewind, after the answer. Without hard
    links (or descriptors) a plain rename: nothing kept, the same result."""
    keeps = keeps_replaced(ws)
    write(ws, "sub/f", "v1")
    cp = store.checkpoint()
    write(ws, "sub/f", "v2")
    store.rewind(cp.id, finish_later=True)
    assert (ws / "sub" / "f").read_text() == "v1"
    kept = second_names(ws)
    if keeps:
        assert [(k.parent, k.read_text()) for k in kept] == [(ws / "sub", "v2")]
    else:
        assert kept == []
    store.finish_rewind()
    assert second_names(ws) == []
    store.undo()  # not finished later: released before it returns
    assert (ws / "sub" / "f").read_text() == "v2" and second_names(ws) == []


def test_a_crash_before_the_replaced_files_are_released_leaves_none(store: Store, ws: Path
                                                                    ) -> None:
    keeps = keeps_replaced(ws)
    _rewound(store, ws)
    assert len(second_names(ws)) == (1 if keeps else 0), "f's replaced version, until finished"
    # the process dies here: the next open finishes the journal and removes what it kept
    Store.open(ws)
    assert second_names(ws) == []
    assert (ws / "f").read_text() == "v1"
