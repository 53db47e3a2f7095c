"""The first checkpoint of a big workspace in bounded memory: what the walk holds per file is
let go as soon as its folder's tree is built, and the tree cache is bounded by entries. The
trees must be exactly those of the way it was done before (everything held, then built)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from texttrees import write_text_trees
from turnback import Store
from turnback.objects import trees as trees_mod
from turnback.snapshot import hashing
from turnback.snapshot.nodes import HashedRow, Pending
from wsutil import plain_scan


def _workspace(ws: Path, folders: int = 30, per: int = 30) -> None:
    for d in range(folders):
        sub = ws / f"d{d % 5}" / f"e{d}"
        sub.mkdir(parents=True, exist_ok=True)
        for i in range(per):
            (sub / f"f{i}.txt").write_text(f"{d}:{i}\n" * (i % 4 + 1))
        os.chmod(sub / "f0.txt", 0o755)
        os.symlink("f1.txt", sub / "link")
    (ws / "top.txt").write_text("top")


@pytest.mark.parametrize("inline", [True, False], ids=["few files", "the pool"])
def test_the_first_checkpoint_builds_the_same_trees_with_a_tiny_tree_cache(
    ws: Path, monkeypatch: pytest.MonkeyPatch, inline: bool,
) -> None:
    _workspace(ws, folders=2 if inline else 30, per=20 if inline else 30)
    want = plain_scan(ws)  # trusts no cache, stores nothing
    monkeypatch.setattr(trees_mod, "CACHE_ENTRIES", 25)  # cleared many times over
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
        assert (cp.tree, cp.files, cp.bytes) == (want.tree, want.files, want.bytes)
        assert store.trees.held <= 25, "the least recently used trees go past its budget"
        assert not store.scanner._results, "every file's result is let go once built"
        # and the next checkpoint, from the stat cache, agrees
        (ws / "d0" / "e0" / "f3.txt").write_text("changed")
        again = store.checkpoint()
        assert again.tree == plain_scan(ws).tree != cp.tree


def test_a_file_that_vanishes_while_hashed_is_absent_not_an_error(
    ws: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _workspace(ws, folders=10, per=10)
    real = hashing.Hashing._hash_one
    gone: list[str] = []

    def vanish_first(self: hashing.Hashing, p: Pending, write: bool, started: int
                     ) -> HashedRow:
        if not gone:  # listed, then gone before it is read
            gone.append(p.rel)
            os.unlink(os.path.join(self.workspace, p.rel))
        return real(self, p, write, started)

    monkeypatch.setattr(hashing.Hashing, "_hash_one", vanish_first)
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
    monkeypatch.undo()
    assert gone
    want = plain_scan(ws)
    assert (cp.tree, cp.files) == (want.tree, want.files) and want.files == 10 * 11 + 1 - 1


# The root tree of ``_pinned_workspace`` as the code before the streaming build made it (all
# of the walk held, then built; checked at d8084f2, text trees): a streaming build must make
# the same. Trees written binary (format 3) name the same folders PINNED_BINARY.
PINNED = "36a707bb94ae5258d8747a9ed4ccda29c4c8efb13b170777231a4a3cdc9c10b9"
PINNED_BINARY = "90787198a5d1aba9abe704db1d91136eb1c0ff62f9b8dfe5ce0e8fd1d969286e"


def _pinned_workspace(ws: Path) -> None:
    _workspace(ws)
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    (ws / "d1" / "x.log").write_text("ignored")
    (ws / "d2" / "build").mkdir()
    (ws / "d2" / "build" / "out.o").write_text("ignored")
    (ws / "empty").mkdir()


@pytest.mark.parametrize("text", [True, False])
def test_the_streaming_build_makes_the_trees_the_held_build_made(
        ws: Path, monkeypatch: pytest.MonkeyPatch, text: bool) -> None:
    _pinned_workspace(ws)
    if text:
        write_text_trees(monkeypatch)
    pinned = PINNED if text else PINNED_BINARY
    with Store.open(ws, create=True) as store:
        first = store.checkpoint()
        again = store.checkpoint()  # from the stat cache
    assert (first.tree, first.files, first.bytes) == (pinned, 932, 11916)
    assert again.tree == pinned and Store.open(ws).checkpoint().tree == pinned
