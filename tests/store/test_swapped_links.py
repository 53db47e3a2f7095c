"""A link swapped into ``objects/`` after the store was opened (objects/objfolder.py): a
server holds a store for hours, and a checkout, an agent's command or a sync may put a
link where a folder was. No object file is created, replaced or removed through it:
the checkpoint (or gc) fails with an error naming the link, and the folder the link
names is as it was. Run again with folders reached by path (scripts/test-fspaths.sh)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Unsafe
from turnback.objects import packs
from turnback.objects.objectstore import BLOB, LOOSE_THRESHOLD, hash_bytes
from wsutil import age_tree, write

from .swap_setup import aged_workspace, outside_folder, swap

BIG = b"attacker-visible bytes\n" * (LOOSE_THRESHOLD // 16)  # a loose object


def _contents(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its bytes: what a write or removal there changes."""
    out = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            p = Path(dirpath) / name
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return aged_workspace(tmp_path)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """The folder a swapped-in link names (``~/.bashrc.d`` in the attack), with a file of
    its own."""
    return outside_folder(tmp_path)


def _edit(ws: Path, tag: str, data: bytes | None = None) -> None:
    write(ws, "d0/f0.txt", data if data is not None else f"{tag}\n" * 20)
    age_tree(ws)


@pytest.fixture
def packs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch writes a pack (a small one would go to the object log)."""
    monkeypatch.setattr(packs, "LOG_BYTES", 0)


@pytest.fixture
def store(ws: Path) -> Iterator[Store]:
    with Store.open(ws) as s:
        s.checkpoint()
        yield s


def _refused(call: object, link: str) -> None:
    assert callable(call)
    with pytest.raises(Unsafe, match=f"'{link}' is a symlink") as err:
        call()
    assert "Remove it" in err.value.message


def test_a_loose_object_is_not_written_through_a_linked_subfolder(
        store: Store, ws: Path, outside: Path) -> None:
    name = hash_bytes(BLOB, BIG)
    sub = f"objects/{name[:2]}"
    swap(store.root / sub, outside)
    before = _contents(outside)
    _edit(ws, "big", BIG)
    _refused(lambda: store.checkpoint(dirty={"d0/f0.txt"}), sub)
    assert _contents(outside) == before


def test_a_put_with_no_batch_is_not_written_through_a_linked_subfolder(
        store: Store, outside: Path) -> None:
    data = b"a small object put with no writer\n"
    name = hash_bytes(BLOB, data)
    sub = f"objects/{name[:2]}"
    swap(store.root / sub, outside)
    before = _contents(outside)
    _refused(lambda: store.objects.put(BLOB, data, name), sub)
    assert _contents(outside) == before


def test_a_streamed_object_is_not_written_through_a_linked_subfolder(
        store: Store, ws: Path, outside: Path) -> None:
    """A file of 8 MiB or more: hashed first, then compressed into a temporary file."""
    data = os.urandom(1 << 16) * 130
    name = hash_bytes(BLOB, data)
    sub = f"objects/{name[:2]}"
    swap(store.root / sub, outside)
    before = _contents(outside)
    path = write(ws, "huge.bin", data)
    _refused(lambda: store.objects.put_file(path, len(data)), sub)
    assert _contents(outside) == before


@pytest.mark.usefixtures("packs_only")
def test_a_pack_is_not_written_through_a_linked_pack_folder(
        store: Store, ws: Path, outside: Path) -> None:
    swap(store.root / "objects" / "pack", outside)
    before = _contents(outside)
    _edit(ws, "into a pack")
    _refused(lambda: store.checkpoint(dirty={"d0/f0.txt"}), "objects/pack")
    assert _contents(outside) == before


def test_a_log_is_not_made_through_a_linked_log_folder(
        store: Store, ws: Path, outside: Path) -> None:
    """The process's log was made by the first checkpoint; gone from its name, the next
    frame starts a new log, which must not be made where the link points."""
    assert (store.root / "objects" / "log").is_dir()
    swap(store.root / "objects" / "log", outside)
    before = _contents(outside)
    _edit(ws, "into the log")
    _refused(lambda: store.checkpoint(dirty={"d0/f0.txt"}), "objects/log")
    assert _contents(outside) == before


def test_nothing_is_written_through_a_linked_objects_folder(
        store: Store, ws: Path, outside: Path) -> None:
    swap(store.root / "objects", outside)
    before = _contents(outside)
    _edit(ws, "anywhere")
    _refused(lambda: store.checkpoint(dirty={"d0/f0.txt"}), "objects")
    assert _contents(outside) == before


def test_the_checkpoint_after_the_link_is_removed_stores_again(
        store: Store, ws: Path, outside: Path) -> None:
    """The refusal loses nothing: once the link is gone the same content is stored and
    read back."""
    swap(store.root / "objects" / "log", outside)
    _edit(ws, "later")
    with pytest.raises(Unsafe):
        store.checkpoint(dirty={"d0/f0.txt"})
    (store.root / "objects" / "log").unlink()
    cp = store.checkpoint(dirty={"d0/f0.txt"})
    assert store.read_file(cp.id, "d0/f0.txt") == b"later\n" * 20


# -- gc: what it would remove, through a link to a copy of the store's own files ----------

def _garbage(store: Store, ws: Path, data: bytes | None = None) -> None:
    """A checkpoint whose content the next one replaces: garbage for ``gc(keep_last=1)``."""
    _edit(ws, "soon garbage", data)
    store.checkpoint(dirty={"d0/f0.txt"})
    _edit(ws, "kept")
    store.checkpoint(dirty={"d0/f0.txt"})


@pytest.mark.usefixtures("packs_only")
def test_gc_removes_and_writes_nothing_through_a_linked_pack_folder(
        store: Store, ws: Path, outside: Path) -> None:
    _garbage(store, ws)
    swap(store.root / "objects" / "pack", outside)
    before = _contents(outside)
    _refused(lambda: store.gc(keep_last=1), "objects/pack")
    assert _contents(outside) == before


def test_gc_removes_no_log_through_a_linked_log_folder(
        store: Store, ws: Path, outside: Path) -> None:
    _garbage(store, ws)
    store.objects.close()  # its log is the copy's now: a gc would merge and remove it
    swap(store.root / "objects" / "log", outside)
    before = _contents(outside)
    assert any(n.startswith("log-") for n in before)
    _refused(lambda: store.gc(keep_last=1), "objects/log")
    assert _contents(outside) == before


def test_gc_removes_no_loose_object_through_a_linked_subfolder(
        store: Store, ws: Path, outside: Path) -> None:
    _garbage(store, ws, BIG)
    sub = f"objects/{hash_bytes(BLOB, BIG)[:2]}"
    # only the copy: a file of another name there fails the gc before (it names no object)
    (outside / "mine.sh").unlink()
    swap(store.root / sub, outside)
    before = _contents(outside)
    assert len(before) == 1
    _refused(lambda: store.gc(keep_last=1), sub)
    assert _contents(outside) == before


def test_gc_removes_nothing_through_a_linked_objects_folder(
        store: Store, ws: Path, outside: Path) -> None:
    _garbage(store, ws, BIG)
    swap(store.root / "objects", outside)
    before = _contents(outside)
    _refused(lambda: store.gc(keep_last=1), "objects")
    assert _contents(outside) == before
