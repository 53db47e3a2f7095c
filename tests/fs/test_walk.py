"""``fs/walk.py`` answers what ``os.walk`` answers, without a frame a folder."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from turnback.fs.walk import walk
from wsutil import write


def _tree(root: Path) -> None:
    for rel in ("a.txt", "b/c.txt", "b/d/e.txt", "b/d/f/g.txt", "h/i.txt", "j/k.txt"):
        write(root, rel, rel)
    (root / "empty").mkdir()
    os.symlink("b", root / "to_b")  # a link to a folder: listed as one, not entered
    os.symlink("nowhere", root / "dangling")  # a file to os.walk


def test_the_same_answers_as_os_walk(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert list(walk(tmp_path)) == list(os.walk(tmp_path))


def test_subfolders_taken_out_in_place_are_not_entered(tmp_path: Path) -> None:
    _tree(tmp_path)

    def pruned(walker: Iterable[tuple[str, list[str], list[str]]]
               ) -> list[tuple[str, list[str], list[str]]]:
        out = []
        for folder, dirs, files in walker:
            dirs[:] = [d for d in dirs if d != "d"]
            out.append((folder, sorted(dirs), sorted(files)))
        return out

    ours = pruned(walk(tmp_path))
    assert ours == pruned(os.walk(tmp_path))
    assert not any(folder.endswith("/d") for folder, _, _ in ours)


def test_a_folder_that_cannot_be_listed_is_passed_over(tmp_path: Path) -> None:
    assert list(walk(tmp_path / "missing")) == []
