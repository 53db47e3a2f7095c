"""A safety checkpoint's label read back and said in words (store/safety_names.py): what
the CLI prints and the server answers as ``safetyOf``."""

from __future__ import annotations

from pathlib import Path

from turnback.models import Checkpoint
from turnback.store.facade import Store
from turnback.store.safety_names import event_summary, has_undo, safety_label, safety_of, words


def cp(cid: str, label: str, auto: bool = True, origin: str | None = None) -> Checkpoint:
    return Checkpoint(cid, label, "2026-11-29T06:00:00Z", "t" * 64, "s", None, auto,
                      origin=origin)


def test_words_name_the_target_once_and_an_undo_by_the_rewind_it_undid() -> None:
    tests = cp("e40156470bcb", "Tests pass", auto=False)
    before = cp("206e2865736d", safety_label("rewind", tests.id))
    undo = cp("9dc259fdc4ad", safety_label("undo", before.id))
    redo = cp("d38325814c1a", safety_label("undo", undo.id))
    again = cp("9674f70ca27a", safety_label("rewind", before.id))
    by_id = {c.id: c for c in (tests, before, undo, redo, again)}
    assert words(before, by_id) == "before rewind to “Tests pass”"
    # an undo's says which rewind it was taken before; an undo of that undo is a redo
    assert words(undo, by_id) == "before undo of rewind to “Tests pass”"
    assert words(redo, by_id) == "before redo of rewind to “Tests pass”"
    third = cp("5b0f0e1a2c3d", safety_label("undo", redo.id))
    assert words(third, {**by_id, third.id: third}) == "before undo of rewind to “Tests pass”"
    # a rewind to a safety checkpoint names it in its words, two levels, no further
    assert words(again, by_id) == "before rewind to “before rewind to “Tests pass””"
    assert words(again, by_id, depth=2) == "before rewind to “before rewind”"
    assert words(tests, by_id) == "Tests pass"


def test_only_an_automatic_checkpoint_of_this_workspace_with_the_whole_shape_counts() -> None:
    assert safety_of(cp("a" * 12, "before rewind to e40156470bcb")) == ("rewind", "e40156470bcb")
    assert safety_of(cp("a" * 12, "before rewind to e40156470bcb", auto=False)) is None
    assert safety_of(cp("a" * 12, "before rewind to e40156470bcb", origin="m1")) is None
    assert safety_of(cp("a" * 12, "before rewind to e40156470bcb and more")) is None
    assert safety_of(cp("a" * 12, "before redo to e40156470bcb")) is None
    # naming a checkpoint that is not there: the label as stored
    lone = cp("a" * 12, "before rewind to e40156470bcb")
    assert words(lone, {}) == "before rewind to e40156470bcb"


def test_an_undo_whose_chain_ends_nowhere_known_or_loops_says_before_undo() -> None:
    lone = cp("9dc259fdc4ad", safety_label("undo", "206e2865736d"))
    assert words(lone, {lone.id: lone}) == "before undo"
    # two undos naming each other (a written store): the chain stops, no recursion
    a = cp("aaaaaaaaaaaa", safety_label("undo", "bbbbbbbbbbbb"))
    b = cp("bbbbbbbbbbbb", safety_label("undo", "aaaaaaaaaaaa"))
    assert words(a, {a.id: a, b.id: b}) == "before undo"
    # a rewind whose target is gone: which rewind is said, not where to
    before = cp("206e2865736d", safety_label("rewind", "e40156470bcb"))
    undo = cp("9dc259fdc4ad", safety_label("undo", before.id))
    assert words(undo, {c.id: c for c in (before, undo)}) == "before undo of rewind"


def test_the_stored_field_is_read_before_the_label() -> None:
    tests = cp("e40156470bcb", "Tests pass", auto=False)
    stored = cp("206e2865736d", "a label of any shape")
    stored.safety_of = ("rewind", tests.id)
    assert safety_of(stored) == ("rewind", tests.id)
    assert words(stored, {c.id: c for c in (tests, stored)}) == "before rewind to “Tests pass”"
    # a user's checkpoint (or a pulled one) with the field is still none
    mine = cp("306e2865736d", "mine", auto=False)
    mine.safety_of = ("rewind", tests.id)
    assert safety_of(mine) is None


def test_a_records_field_of_another_shape_is_read_as_none() -> None:
    base = cp("206e2865736d", "x").to_json()
    good = {**base, "safetyOf": {"op": "undo", "checkpoint": "e40156470bcb"}}
    assert Checkpoint.from_json(good).safety_of == ("undo", "e40156470bcb")
    assert Checkpoint.from_json(good).to_json() == good
    for bad in ({"op": "redo", "checkpoint": "e40156470bcb"}, {"op": "rewind"},
                {"op": "rewind", "checkpoint": "../etc"}, {"op": "rewind", "checkpoint": 7},
                ["rewind", "e40156470bcb"], "rewind", None):
        assert Checkpoint.from_json({**base, "safetyOf": bad}).safety_of is None, bad
    assert "safetyOf" not in cp("206e2865736d", "x").to_json()


def test_a_long_target_label_is_cut() -> None:
    long = cp("e40156470bcb", "word " * 10_000, auto=False)
    before = cp("206e2865736d", safety_label("rewind", long.id))
    said = words(before, {c.id: c for c in (long, before)})
    assert said.startswith("before rewind to “word word") and said.endswith("…”")
    assert len(said) < 110


def test_the_store_labels_its_safety_checkpoints_in_that_shape(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    store = Store.open(ws, create=True)
    try:
        first = store.checkpoint(label="one")
        (ws / "a.txt").write_text("two\n")
        rewound = store.rewind(first.id)
        undone = store.undo()
        by_id = {c.id: c for c in store.checkpoints()}
        assert rewound.safety_checkpoint is not None and undone.safety_checkpoint is not None
        assert safety_of(by_id[rewound.safety_checkpoint]) == ("rewind", first.id)
        assert safety_of(by_id[undone.safety_checkpoint]) == ("undo", rewound.safety_checkpoint)
    finally:
        store.close()
    # stored in the record, not only read from the label: read back by a new open
    store = Store.open(ws)
    try:
        by_id = {c.id: c for c in store.checkpoints()}
        assert by_id[rewound.safety_checkpoint].safety_of == ("rewind", first.id)
        assert by_id[undone.safety_checkpoint].safety_of == ("undo", rewound.safety_checkpoint)
        assert by_id[first.id].safety_of is None
    finally:
        store.close()


def test_an_undos_event_names_what_it_undid_and_a_redo_says_redo(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    store = Store.open(ws, create=True)
    try:
        first = store.checkpoint(label="Tests pass")
        (ws / "a.txt").write_text("two\n")
        rewound = store.rewind(first.id)
        store.undo()
        store.undo()  # the undo of the undo: a redo
        store.undo()
        by_id = {c.id: c for c in store.checkpoints(None)}
        events = [e for s in store.sessions()[0] for e in store.session(s.header.id).events
                  if e.kind == "rewind"]
        assert has_undo(events)
        # in the order appended (one session: the workspace's)
        assert [event_summary(e, by_id) for e in events] == [
            f"rewind to {first.id} (files)",
            "undo of rewind to “Tests pass” (files)",
            "redo of rewind to “Tests pass” (files)",
            "undo of rewind to “Tests pass” (files)",
        ]
        assert rewound.safety_checkpoint is not None
        # with checkpoints it cannot find, as before: the event's own words
        assert [event_summary(e, {}) for e in events if e.data.get("undo")] == ["undo (files)"] * 3
    finally:
        store.close()
