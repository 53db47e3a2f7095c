"""A long-lived Store lists the pack folder again only after a gc, not at every checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.objects.packs import PackReader


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for i in range(6):
        p = ws / f"d{i % 2}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"file {i}\n")
    return ws


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    refresh = PackReader.refresh

    def counted(self: PackReader) -> None:
        seen.append(1)
        refresh(self)

    monkeypatch.setattr(PackReader, "refresh", counted)
    return seen


def test_incremental_checkpoints_do_not_list_the_packs_again(tmp_path: Path,
                                                             listings: list[int]) -> None:
    ws = _workspace(tmp_path)
    with Store.open(ws) as store:
        store.checkpoint()
        assert listings, "the first checkpoint lists the packs"
        listings.clear()
        for i in range(3):
            (ws / "d0" / "f0.txt").write_text(f"version {i}\n")
            cp = store.checkpoint(dirty={"d0/f0.txt"})
            assert store.read_file(cp.id, "d0/f0.txt") == f"version {i}\n".encode()
        assert listings == []


def test_a_gc_elsewhere_makes_the_next_checkpoint_list_them(tmp_path: Path) -> None:
    """Another process's gc removes an object this one's pack index still places (its
    pack repacked away): the next checkpoint that has that content again stores it again
    instead of naming a removed object."""
    ws = _workspace(tmp_path)
    f = ws / "d1" / "f1.txt"
    with Store.open(ws) as store:
        store.checkpoint()
        f.write_text("soon garbage\n")
        store.checkpoint(dirty={"d1/f1.txt"})
        f.write_text("kept\n")
        store.checkpoint(dirty={"d1/f1.txt"})
        with Store.open(ws) as other:
            other.gc(keep_last=1)
        f.write_text("soon garbage\n")  # the removed blob's content, back
        cp = store.checkpoint(dirty={"d1/f1.txt"})
        assert store.read_file(cp.id, "d1/f1.txt") == b"soon garbage\n"
    with Store.open(ws) as fresh:
        assert fresh.read_file(cp.id, "d1/f1.txt") == b"soon garbage\n"
        assert fresh.fsck().ok
