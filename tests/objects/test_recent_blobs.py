"""The blobs a process's small batches stored are read back without a pack block's decode
(objects/recentblobs.py): an undo's targets, a rewind's of files stored by the turns before.
An entry is never served for another name, the bound holds, a large batch keeps nothing, and
a gc (this process's or another's) empties it."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.objects import packs
from turnback.objects.objectstore import BLOB, hash_bytes
from turnback.objects.recentblobs import RecentBlobs


def _count_block_reads(monkeypatch: pytest.MonkeyPatch) -> list[packs.Loc]:
    reads: list[packs.Loc] = []
    real = packs.PackReader.read

    def counted(self: packs.PackReader, loc: packs.Loc) -> bytes:
        reads.append(loc)
        return real(self, loc)

    monkeypatch.setattr(packs.PackReader, "read", counted)
    return reads


def _files(ws: Path, n: int, tag: str) -> None:
    for i in range(n):
        (ws / f"f{i}.txt").write_bytes(f"{tag} {i}\n".encode() * 200)


def test_an_undo_reads_its_targets_without_a_block_read(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The undo writes back what the rewind's safety checkpoint just stored. On main each
    of the 10 targets was read out of its log block (10 block reads)."""
    _files(ws, 10, "first")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        _files(ws, 10, "edited")
        edited = {f"f{i}.txt": (ws / f"f{i}.txt").read_bytes() for i in range(10)}
        store.rewind(cp.id)
        reads = _count_block_reads(monkeypatch)
        store.undo()
        blob_reads = [loc for loc in reads if loc.length > 5 and loc.pack]
        assert blob_reads == []
    for rel, data in edited.items():
        assert (ws / rel).read_bytes() == data


def test_a_kept_entry_is_never_served_for_another_name(ws: Path) -> None:
    """Bytes that do not hash to the name asked for are dropped, and the store's own copy
    is read instead."""
    (ws / "a.txt").write_bytes(b"the stored bytes\n")
    with Store.open(ws) as store:
        store.checkpoint()
        name = hash_bytes(BLOB, b"the stored bytes\n")
        recent = store.objects.recent
        assert recent.get(name) is not None  # kept by the checkpoint
        recent._kept[name] = BLOB + b"\0" + b"other bytes\n"  # as a stray write would
        assert store.objects.get(BLOB, name) == b"the stored bytes\n"
        assert recent.get(name) is None  # dropped, not served


def test_the_bound_holds_and_the_oldest_go_first() -> None:
    recent = RecentBlobs(bound=10_000, max_object=3_000)
    names = []
    for i in range(20):
        raw = BLOB + b"\0" + bytes([i]) * 1_000
        name = hash_bytes(BLOB, raw[5:])
        names.append(name)
        recent.offer(name, raw)
        recent.keep_offered()
        assert recent.held_bytes <= 10_000
    assert recent.get(names[0]) is None
    assert recent.get(names[-1]) is not None
    big = BLOB + b"\0" + b"x" * 5_000
    recent.offer(hash_bytes(BLOB, big[5:]), big)  # past max_object: not kept
    recent.keep_offered()
    assert recent.get(hash_bytes(BLOB, big[5:])) is None


def test_a_large_batch_keeps_nothing(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch that goes to a pack (a first checkpoint of a whole workspace) is not kept:
    only the small batches' recent blobs are."""
    monkeypatch.setattr(packs, "LOG_BYTES", 1 << 10, raising=False)
    _files(ws, 30, "many")
    with Store.open(ws) as store:
        store.checkpoint()
        assert store.objects.packs.packs() - set(store.objects.packs.logs())  # a pack
        assert store.objects.recent.held_bytes == 0


def test_a_failed_batch_keeps_nothing(ws: Path) -> None:
    with Store.open(ws) as store:
        objects = store.objects
        with pytest.raises(RuntimeError), objects.batch(fsync=False):
            objects.put(BLOB, b"never kept\n")
            raise RuntimeError("the batch fails")
        assert objects.recent.held_bytes == 0


def test_a_gc_here_or_in_another_process_empties_it(ws: Path) -> None:
    """A gc that removes objects (retention drops the older checkpoint here) empties this
    process's kept blobs, and another process's gc does too (its generation mark, seen at
    the next checkpoint): a blob it removed is not read from memory."""
    (ws / "a.txt").write_bytes(b"one\n")
    one = hash_bytes(BLOB, b"one\n")
    with Store.open(ws) as store:
        store.checkpoint()
        (ws / "a.txt").write_bytes(b"two\n")
        store.checkpoint()
        assert store.objects.recent.get(one) is not None
        store.gc(keep_last=1)
        assert store.objects.recent.held_bytes == 0
        (ws / "a.txt").write_bytes(b"three\n")
        store.checkpoint()
        (ws / "a.txt").write_bytes(b"four\n")
        store.checkpoint()
        three = hash_bytes(BLOB, b"three\n")
        assert store.objects.recent.get(three) is not None
        with Store.open(ws) as other:
            other.gc(keep_last=1)  # removes "three"
        (ws / "b.txt").write_bytes(b"five\n")
        store.checkpoint()
        assert store.objects.recent.get(three) is None
        assert not store.objects.exists(three)
