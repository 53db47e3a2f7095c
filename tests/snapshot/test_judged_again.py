"""An incremental scan's judgements of the changed names (ignored or not), kept from one
checkpoint to the next (``IgnoreRules.in_dir_again``, branch atonce34), go with the rules
they were judged by: a changed ignore file, or a folder replaced by one with rules of its
own, judges those names again. Each checkpoint's tree is the one a full scan builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from turnback import Store
from turnback.snapshot import ignore


def _full(ws: Path) -> tuple[str, int]:
    with Store.open(ws) as fresh:
        res = fresh.scanner.scan(write=False)
    return res.tree, res.files


def test_a_folder_replaced_with_its_own_rules_judges_its_names_again(ws: Path) -> None:
    (ws / "b").mkdir()
    (ws / "b" / "x.log").write_text("one")
    (ws / "keep.txt").write_text("k")
    with Store.open(ws) as store:
        store.checkpoint(dirty=set())  # the base: a full scan
        (ws / "b" / "x.log").write_text("two")
        inc = store.checkpoint(dirty={"b/x.log"})
        assert store.scanner.ignore._judged.get(("b/x.log", False)) is False  # kept
        assert (inc.tree, inc.files) == _full(ws)
        # b/ replaced by a folder moved in whose own .gitignore leaves *.log out
        (ws / "c").mkdir()
        (ws / "c" / ".gitignore").write_text("*.log\n")
        (ws / "c" / "x.log").write_text("three")
        shutil.rmtree(ws / "b")
        (ws / "c").rename(ws / "b")
        moved = store.checkpoint(dirty={"b", "c"})
        assert (moved.tree, moved.files) == _full(ws)
        (ws / "b" / "x.log").write_text("four")
        again = store.checkpoint(dirty={"b/x.log"})
        # judged by b/.gitignore, not by what was kept from before it came
        assert store.trees.lookup(again.tree, "b/x.log") is None
        assert (again.tree, again.files) == _full(ws)


def test_a_changed_ignore_file_judges_the_kept_names_again(ws: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "a.tmp").write_text("one")
    (ws / "d" / "keep.txt").write_text("d stays in the tree: not listed whole again")
    with Store.open(ws) as store:
        store.checkpoint(dirty=set())
        (ws / "d" / "a.tmp").write_text("two")
        first = store.checkpoint(dirty={"d/a.tmp"})
        assert store.trees.lookup(first.tree, "d/a.tmp") is not None
        (ws / ".gitignore").write_text("*.tmp\n")
        store.checkpoint(dirty={".gitignore"})  # the rules changed: a walk
        (ws / "d" / "a.tmp").write_text("three")
        last = store.checkpoint(dirty={"d/a.tmp"})
        assert store.trees.lookup(last.tree, "d/a.tmp") is None
        assert (last.tree, last.files) == _full(ws)


def test_the_kept_judgements_are_bounded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ignore, "JUDGED_MAX", 3)
    (ws / "d").mkdir()
    for i in range(8):
        (ws / "d" / f"f{i}.txt").write_text(str(i))
    with Store.open(ws) as store:
        store.checkpoint(dirty=set())
        for i in range(8):
            (ws / "d" / f"f{i}.txt").write_text(f"again {i}")
            cp = store.checkpoint(dirty={f"d/f{i}.txt"})
            assert len(store.scanner.ignore._judged) <= 3
        assert (cp.tree, cp.files) == _full(ws)
