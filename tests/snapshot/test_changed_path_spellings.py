"""A scan around changed paths (``Store.checkpoint(dirty=...)``, what the watcher and a rewind
feed it) names each file as a walk does, however the caller spelled it. Before (trust24's "left
open") ``./f``, ``a//f``, ``a/./f`` or ``d/`` looked a file up under that spelling: a second name
for one file in the checkpoint, or a change missed; ``a/../f`` was looked up as it is. Now each
is the clean name, a climbing one is refused naming it, and nothing is stored (trust25; the
spelled cases fail before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import InvalidInput
from wsutil import write


@pytest.mark.parametrize("spelled", [
    "./d/a.txt", "d//a.txt", "d/./a.txt", "d/a.txt/", "/d/a.txt", "d/", "./d",
    "d/sub/..x/../../a.txt",
])
def test_a_changed_path_in_any_spelling_makes_the_walks_tree(ws: Path, spelled: str) -> None:
    write(ws, "d/a.txt", "a1\n")
    write(ws, "d/b.txt", "b1\n")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        write(ws, "d/a.txt", "a2, longer\n")
        if "/../" in spelled:  # a climbing path: refused, naming it
            with pytest.raises(InvalidInput, match=r"changed path 'd/sub/\.\.x/\.\./\.\./a\.txt'"):
                store.checkpoint(dirty=[spelled])
            assert len(store.checkpoints()) == 1
            return
        told = store.checkpoint(dirty=[spelled])
        walked = store.checkpoint()  # no changed paths: a walk of the whole workspace
        assert told.tree == walked.tree, spelled
        assert store.read_file(told.id, "d/a.txt") == b"a2, longer\n"


def test_the_workspace_itself_as_a_changed_path_is_a_walk(ws: Path) -> None:
    write(ws, "a.txt", "1\n")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        write(ws, "b.txt", "new\n")
        told = store.checkpoint(dirty=["."])
        assert told.tree == store.checkpoint().tree
        assert store.read_file(told.id, "b.txt") == b"new\n"
