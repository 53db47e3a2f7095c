"""Red-team pass over the pack folder listed again only after a gc (``_packs_stale``):
a long-lived Store trusts the pack indexes it knows between gcs. What removes a pack
without a gc's mark (a pack deleted by hand, a gc whose mark was written back) must not
make a checkpoint name an object that is gone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store.test_pack_listing import _workspace
from turnback import Store


@pytest.fixture(autouse=True)
def _packs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These attacks are on packs and their indexes: every batch writes one (a small one
    would go to the object log, tested in tests/store/test_object_log.py)."""
    from turnback.objects import packs
    monkeypatch.setattr(packs, "LOG_BYTES", 0)



def _packs(store: Store) -> set[Path]:
    return set((store.root / "objects" / "pack").glob("*.pack"))


def test_a_pack_deleted_by_hand_is_not_trusted_by_the_next_checkpoint(tmp_path: Path) -> None:
    """The content of a pack removed by hand, back in the workspace: the long-lived store
    stores it again (as it did when every checkpoint listed the folder), instead of
    recording a checkpoint whose file is missing."""
    ws = _workspace(tmp_path)
    f = ws / "d1" / "f1.txt"
    with Store.open(ws) as store:
        store.checkpoint()
        before = _packs(store)
        f.write_text("only in the lost pack\n")
        store.checkpoint(dirty={"d1/f1.txt"})
        (lost,) = _packs(store) - before
        lost.unlink()
        lost.with_suffix(".idx").unlink()
        f.write_text("another\n")
        store.checkpoint(dirty={"d1/f1.txt"})
        f.write_text("only in the lost pack\n")  # back: its blob is in the removed pack
        cp = store.checkpoint(dirty={"d1/f1.txt"})
        assert store.read_file(cp.id, "d1/f1.txt") == b"only in the lost pack\n"
    with Store.open(ws) as fresh:
        assert fresh.read_file(cp.id, "d1/f1.txt") == b"only in the lost pack\n"


def test_a_gc_mark_written_back_does_not_hide_a_removed_pack(tmp_path: Path) -> None:
    """A gc in another process removes garbage, then its generation mark is written back to
    the value this process saw (an attacker, a restored backup of ``cache/``): the next
    checkpoint whose content was garbage still stores it."""
    ws = _workspace(tmp_path)
    f = ws / "d1" / "f1.txt"
    mark = ws / ".turnback" / "cache" / "gc-generation"
    with Store.open(ws) as store:
        store.checkpoint()
        f.write_text("soon garbage\n")
        store.checkpoint(dirty={"d1/f1.txt"})
        f.write_text("kept\n")
        store.checkpoint(dirty={"d1/f1.txt"})
        seen = mark.read_bytes() if mark.exists() else None
        with Store.open(ws) as other:
            other.gc(keep_last=1)
        if seen is None:
            mark.unlink()
        else:
            mark.write_bytes(seen)
        f.write_text("soon garbage\n")
        cp = store.checkpoint(dirty={"d1/f1.txt"})
    with Store.open(ws) as fresh:
        assert fresh.read_file(cp.id, "d1/f1.txt") == b"soon garbage\n"


@pytest.mark.parametrize("planted", ["same value", "huge", "fifo", "link"])
def test_a_planted_gc_mark_does_not_hide_a_gc(tmp_path: Path, planted: str) -> None:
    """A server prepared the next checkpoint (its objects not committed yet: garbage to a
    gc); a gc elsewhere removes them, then its mark is replaced by what reads as the value
    this process saw (the same bytes again, a file too large to read, a FIFO, a link):
    the next checkpoint must not commit the prepared tree whose objects are gone."""
    ws = _workspace(tmp_path)
    f = ws / "d1" / "f1.txt"
    mark = ws / ".turnback" / "cache" / "gc-generation"
    with Store.open(ws) as store:
        store.checkpoint()
        seen = mark.read_bytes() if mark.exists() else b""
        f.write_text("prepared, not committed\n")
        assert store.prepare({"d1/f1.txt"})
        with Store.open(ws) as other:
            other.gc()
        assert mark.exists()
        mark.unlink()
        if planted == "same value":
            mark.write_bytes(seen)
        elif planted == "huge":
            mark.write_bytes(b"x" * 10_000)
        elif planted == "fifo":
            os.mkfifo(mark)
        else:
            (tmp_path / "elsewhere").write_bytes(seen)
            mark.symlink_to(tmp_path / "elsewhere")
        cp = store.checkpoint(dirty=set())
    with Store.open(ws) as fresh:
        assert fresh.read_file(cp.id, "d1/f1.txt") == b"prepared, not committed\n"
        assert fresh.fsck().ok
