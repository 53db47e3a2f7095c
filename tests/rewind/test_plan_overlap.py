"""A rewind of selected paths that overlap (a folder and a file in it) plans each path once,
and its undo puts each back once: ``diff_plan`` and ``Plan.reverse`` say what a path goes
from and to with one rule, ``Plan.take``."""

from __future__ import annotations

from pathlib import Path

from turnback import Store
from wsutil import write

SELECTED = ["d", "d/new.txt", "d/g.txt", "d/"]


def test_overlapping_paths_are_planned_once(ws: Path) -> None:
    write(ws, "a.txt", "a1\n")
    write(ws, "d/g.txt", "g1\n")
    with Store.open(ws) as store:
        cp = store.checkpoint().id
        write(ws, "a.txt", "a2\n")  # not selected: left as it is
        write(ws, "d/g.txt", "g2\n")
        write(ws, "d/new.txt", "new\n")

        dry = store.rewind(cp, paths=SELECTED, dry_run=True)
        assert (dry.written, dry.created, dry.removed) == (["d/g.txt"], [], ["d/new.txt"])

        done = store.rewind(cp, paths=SELECTED)
        assert (done.written, done.created, done.removed) == (["d/g.txt"], [], ["d/new.txt"])
        assert (ws / "d" / "g.txt").read_text() == "g1\n"
        assert not (ws / "d" / "new.txt").exists()
        assert (ws / "a.txt").read_text() == "a2\n"

        back = store.undo()
        assert (back.written, back.created, back.removed) == (["d/g.txt"], ["d/new.txt"], [])
        assert (ws / "d" / "g.txt").read_text() == "g2\n"
        assert (ws / "d" / "new.txt").read_text() == "new\n"
