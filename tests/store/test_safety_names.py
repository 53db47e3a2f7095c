"""A safety checkpoint's label read back and said in words (store/safety_names.py): what
the CLI prints and the server answers as ``safetyOf``."""

from __future__ import annotations

from pathlib import Path

from turnback.models import Checkpoint
from turnback.store.facade import Store
from turnback.store.safety_names import safety_label, safety_of, words


def cp(cid: str, label: str, auto: bool = True, origin: str | None = None) -> Checkpoint:
    return Checkpoint(cid, label, "2026-11-29T06:00:00Z", "t" * 64, "s", None, auto,
                      origin=origin)


def test_words_name_the_target_once_and_an_undo_plainly() -> None:
    tests = cp("e40156470bcb", "Tests pass", auto=False)
    before = cp("206e2865736d", safety_label("rewind", tests.id))
    undo = cp("9dc259fdc4ad", safety_label("undo", before.id))
    redo = cp("d38325814c1a", safety_label("undo", undo.id))
    again = cp("9674f70ca27a", safety_label("rewind", before.id))
    by_id = {c.id: c for c in (tests, before, undo, redo, again)}
    assert words(before, by_id) == "before rewind to “Tests pass”"
    assert words(undo, by_id) == "before undo"
    assert words(redo, by_id) == "before undo"
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
