"""Format 3 (binary trees) over a store written by format 2 (text trees): an old store
opens, becomes version 3, and every reader of trees works over both encodings at once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from texttrees import write_text_trees
from turnback import Store
from turnback.objects.objectstore import TREE
from turnback.objects.trees import BINARY_TAG, DIR, Tree
from turnback.snapshot.changes import diff_trees
from wsutil import write


def _encodings(store: Store, root: str) -> Iterator[tuple[str, str, bool]]:
    """(folder path, tree id, binary?) for every folder below ``root``, root included."""
    stack = [("", root)]
    while stack:
        path, tree = stack.pop()
        yield path, tree, store.objects.get(TREE, tree)[:1] == BINARY_TAG
        for name, e in store.trees.get(tree).items():
            if e.mode == DIR:
                stack.append((f"{path}{name}/", e.hash))


def _v2_store(ws: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A workspace checkpointed by a store of format 2, then again by this version after
    ``a/b/y.txt`` changed, incrementally on the first's text trees (as a server does):
    (text checkpoint, mixed checkpoint); the store's config then says version 2."""
    write(ws, "top.txt", "top\n")
    write(ws, "run.sh", "#!/bin/sh\n", exec_=True)
    write(ws, "a/x.txt", "x\n")
    write(ws, "a/b/y.txt", "y 1\n")
    write(ws, "c/z.txt", "z\n")
    os.symlink("top.txt", ws / "link")
    with Store.open(ws) as store:
        with monkeypatch.context() as m:
            write_text_trees(m)
            first = store.checkpoint()
            assert not any(binary for _, _, binary in _encodings(store, first.tree))
        write(ws, "a/b/y.txt", "y 2\n")
        second = store.checkpoint(dirty=["a/b/y.txt"])  # as a server's watcher tells it
        encodings = {path: (tree, binary) for path, tree, binary in _encodings(store, second.tree)}
        before = {path: tree for path, tree, _ in _encodings(store, first.tree)}
        # the folders on the changed path are written anew, binary; the others keep their
        # text trees and names
        assert {p for p, (_, binary) in encodings.items() if binary} == {"", "a/", "a/b/"}
        assert encodings["c/"] == (before["c/"], False)
    cfg = ws / ".turnback" / "config.json"
    data = orjson.loads(cfg.read_bytes())
    data["formatVersion"] = 2
    cfg.write_bytes(orjson.dumps(data))
    return first.id, second.id


def test_a_v2_store_opens_as_v3_and_every_reader_takes_text_and_binary_trees(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _v2_store(ws, monkeypatch)
    write(ws, "c/z.txt", "z 2\n")
    with Store.open(ws) as store:
        assert store.format_version == 3
        assert orjson.loads((store.root / "config.json").read_bytes())["formatVersion"] == 3
        third = store.checkpoint()
        assert store.objects.get(TREE, third.tree)[:1] == BINARY_TAG
        assert [(c.path, c.status) for c in store.changes(first, second)] == [
            ("a/b/y.txt", "modified")]
        assert [(c.path, c.status) for c in store.changes(first, third.id)] == [
            ("a/b/y.txt", "modified"), ("c/z.txt", "modified")]
        assert store.changes(third.id) == []  # the working tree (named in binary) against it
        assert store.file_content(first, "a/b/y.txt").text == "y 1\n"
        store.rewind(first)
        assert (ws / "a/b/y.txt").read_text() == "y 1\n"
        assert (ws / "c/z.txt").read_text() == "z\n"
        assert os.access(ws / "run.sh", os.X_OK) and os.readlink(ws / "link") == "top.txt"
        store.undo()
        assert (ws / "a/b/y.txt").read_text() == "y 2\n"
        assert store.fsck().ok
        store.gc()
        assert store.fsck().ok
        assert store.file_content(first, "a/b/y.txt").text == "y 1\n"
        history = {v.checkpoint.id: v.status for v in store.file_history("a/b/y.txt")[0]}
        assert (history[first], history[second]) == ("added", "modified")


def test_a_text_and_a_binary_tree_of_one_folder_differ_in_name_only(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two encodings of the same folders: the ids differ, a diff finds nothing."""
    first, _ = _v2_store(ws, monkeypatch)
    with Store.open(ws) as store:
        text_root = store.resolve_checkpoint(first, "from").tree

        def binary_copy(tree: str) -> str:
            got: Tree = {n: e._replace(hash=binary_copy(e.hash)) if e.mode == DIR else e
                         for n, e in store.trees.get(tree).items()}
            return store.trees.put(got)

        with store.objects.batch(fsync=False):
            binary_root = binary_copy(text_root)
        assert binary_root != text_root
        assert store.objects.get(TREE, binary_root)[:1] == BINARY_TAG
        assert list(diff_trees(store.trees, text_root, binary_root)) == []
        assert store.trees.flatten(text_root) == {
            p: e for p, e in store.trees.flatten(binary_root).items()}
