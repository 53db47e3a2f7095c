"""A stat cache naming folder trees the store does not hold (planted in the store's folder,
or copied from another store of the workspace): the scan reuses a recorded tree only once
the object index holds it, and walks the folder otherwise (redteam32's open item, closed
in ``store27``). Before, the no-op committed the planted tree: a checkpoint nothing could
rewind to, named by fsck only later."""

from __future__ import annotations

import gc
import os
import struct
import sys
import threading
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.jsonl import dumps, loads
from turnback.fs.osflags import DESCRIPTORS
from turnback.snapshot import prescan
from turnback.snapshot import scan as scan_mod
from wsutil import age, age_tree, plain_scan, write

U32 = struct.Struct("<I")
MISSING = "5e" * 32  # a valid tree name no store here holds


def _workspace(ws: Path) -> None:
    for d in ("", "a", "a/x", "b"):
        for i in range(3):
            write(ws, f"{d}/f{i}.txt" if d else f"f{i}.txt", f"{d} {i}")
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()  # every file matched its row: every folder gets a record
        assert {"", "a", "a/x", "b"} <= set(s.scanner.statcache.dirrecs)


def _plant(ws: Path, folder: str) -> None:
    """The stat cache's recorded tree of ``folder`` made ``MISSING``; all else as saved."""
    path = ws / ".turnback" / "cache" / "stat.bin"
    data = path.read_bytes()
    pos = len(prescan.MAGIC)
    (hlen,) = U32.unpack_from(data, pos)
    header = loads(data[pos + 4: pos + 4 + hlen])
    header["dirtrees"][folder][0] = MISSING
    head = dumps(header)
    path.write_bytes(data[:pos] + U32.pack(len(head)) + head + data[pos + 4 + hlen:])


def _fork_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's cold case: forked checks whatever the size (``Scanner._taken_whole``)."""
    if not (sys.platform.startswith("linux") and DESCRIPTORS):
        pytest.skip("the forked check (and so the whole-tree case) runs on Linux with "
                    "folder descriptors only")
    monkeypatch.setattr(prescan, "FORK_MIN_FILES", 0)
    gc.collect()  # a store not closed by an earlier test keeps its hashing threads
    if threading.active_count() > 1:
        pytest.skip("threads of other tests still run: no fork")


def _whole_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each ``Scanner._taken_whole`` call's outcome from now on: True where it answered."""
    taken: list[bool] = []
    real = scan_mod.Scanner._taken_whole

    def taken_whole(self: scan_mod.Scanner) -> object:
        got = real(self)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(scan_mod.Scanner, "_taken_whole", taken_whole)
    return taken


@pytest.mark.parametrize("way", ["whole", "walk"])
@pytest.mark.parametrize("folder", ["", "a"])
def test_a_planted_tree_the_store_lacks_is_walked_not_committed(
        ws: Path, monkeypatch: pytest.MonkeyPatch, folder: str, way: str) -> None:
    """The root's recorded tree (the no-op answers it whole, or the walk reuses it) or a
    sub-folder's (reused by the walk once the top folder changed) names a tree not in the
    store: the checkpoint's tree is the walk's, every file of it readable, fsck clean
    (failed before: the planted tree was committed, fsck named it missing)."""
    _workspace(ws)
    _plant(ws, folder)
    if folder:
        write(ws, "f0.txt", "changed at the top")  # the top folder is built anew
        age(ws / "f0.txt")
    taken = _whole_answers(monkeypatch)
    if way == "whole":
        _fork_now(monkeypatch)
    with Store.open(ws) as s:
        s.scanner.fork_verify = way == "whole"
        cp = s.checkpoint()
        assert cp.tree == plain_scan(ws).tree
        for path, _entry in s.trees.walk(cp.tree, ""):
            assert s.file_content(cp.id, path).text is not None
        assert MISSING not in {t[0] for t in s.scanner.statcache.dirtrees.values()}
        assert s.fsck().ok
    if way == "whole" and not folder:
        assert taken == [False], "checked whole, declined for the missing root"
    with Store.open(ws) as s:
        s.scanner.fork_verify = way == "whole"
        assert s.checkpoint().tree == cp.tree  # the cache saved after it is sound
        assert s.fsck().ok


def test_a_recorded_tree_that_is_not_an_object_name_is_walked(ws: Path) -> None:
    """A recorded tree that is no object name at all (the header's types check, not its
    text) is walked too, never an error for the user."""
    _workspace(ws)
    path = ws / ".turnback" / "cache" / "stat.bin"
    data = path.read_bytes()
    pos = len(prescan.MAGIC)
    (hlen,) = U32.unpack_from(data, pos)
    header = loads(data[pos + 4: pos + 4 + hlen])
    header["dirtrees"][""][0] = "../../x"
    head = dumps(header)
    path.write_bytes(data[:pos] + U32.pack(len(head)) + head + data[pos + 4 + hlen:])
    with Store.open(ws) as s:
        cp = s.checkpoint()
        assert cp.tree == plain_scan(ws).tree
        assert s.fsck().ok


def test_a_no_op_looks_its_trees_up_and_reads_none(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded tree is looked up in the index, never read: a no-op reads no tree."""
    _workspace(ws)
    from turnback.objects.trees import TreeReader

    reads: list[str] = []
    real = TreeReader.get

    def get(self: TreeReader, name: str, *a: object, **kw: object) -> object:
        reads.append(name)
        return real(self, name, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(TreeReader, "get", get)
    with Store.open(ws) as s:
        before = s.checkpoints()[-1].tree
        assert s.checkpoint().tree == before
    assert reads == []
    assert os.path.exists(ws / ".turnback" / "cache" / "stat.bin")


def test_the_whole_tree_case_takes_the_last_checkpoints_root_without_a_look_up(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usual no-op: the recorded root is the tree the last checkpoint names, known held
    from ``checkpoints.jsonl``'s last line, so the object index is not looked in (its
    pack indexes, read for that one look-up, were +4.5 M instructions in the fresh CLI's
    serial tail). Fails before (one look-up of the root)."""
    _workspace(ws)
    _fork_now(monkeypatch)
    from turnback.objects.objectstore import ObjectStore

    looked: list[str] = []
    real = ObjectStore.exists

    def exists(self: ObjectStore, name: str) -> bool:
        looked.append(name)
        return real(self, name)

    monkeypatch.setattr(ObjectStore, "exists", exists)
    taken = _whole_answers(monkeypatch)
    with Store.open(ws) as s:
        s.scanner.fork_verify = True
        before = s.checkpoints()[-1].tree
        assert s.checkpoint().tree == before
    assert taken == [True]
    assert looked == []
