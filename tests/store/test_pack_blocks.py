"""A cold read of one file inflates at most one small block (a rewind's targets are such
reads), and packs written with the larger blocks of earlier versions read the same."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pack_reads import count_inflations, varied_text
from turnback import Store
from turnback.objects import packs


def _workspace(root: Path, files: int = 240) -> dict[str, bytes]:
    """Files of 1-6 KB of varied text: ~0.8 MB, many blocks of any size."""
    rng = random.Random(7)
    out: dict[str, bytes] = {}
    for i in range(files):
        rel = f"d{i % 8}/f{i}.txt"
        data = f"{i}\n{varied_text(rng)}\n".encode()
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        out[rel] = data
    return out


@pytest.fixture
def inflated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(bytes inflated, end of the object wanted in its block) of each block decompression."""
    return count_inflations(monkeypatch)


def _read_cold(store: Store, cp: str, files: dict[str, bytes]) -> None:
    reader = store.objects.packs
    for rel, data in sorted(files.items()):
        reader._blocks.clear()
        reader._cached = 0
        assert store.read_file(cp, rel) == data, rel


def test_a_cold_read_inflates_no_more_than_one_small_block(
        tmp_path: Path, inflated: list[tuple[int, int]]) -> None:
    ws = tmp_path / "ws"
    files = _workspace(ws)
    with Store.open(ws) as store:
        cp = store.checkpoint()
    # another process's reads: the writer's keeps the blobs it stored (recentblobs.py)
    with Store.open(ws) as store:
        inflated.clear()
        _read_cold(store, cp.id, files)
    assert len(inflated) >= len(files)
    # a block is closed by the first object that takes it to BLOCK_RAW or past: it holds
    # less than BLOCK_RAW and one more object (a file, or a tree of a few hundred bytes)
    largest = max(len(data) for data in files.values()) + len(b"blob\0")
    assert max(n for n, _need in inflated) < packs.BLOCK_RAW + largest
    assert all(need <= n for n, need in inflated)
    assert packs.BLOCK_RAW <= 64 << 10, "a rewind's cold reads cost ~2x more at 256 KiB"


def test_a_pack_written_with_larger_blocks_reads_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        inflated: list[tuple[int, int]]) -> None:
    ws = tmp_path / "ws"
    files = _workspace(ws)
    with monkeypatch.context() as m:
        m.setattr(packs, "BLOCK_RAW", 256 << 10)  # what a store of the last version holds
        with Store.open(ws) as store:
            cp = store.checkpoint()
    with Store.open(ws) as store:
        inflated.clear()
        _read_cold(store, cp.id, files)
        assert max(n for n, _need in inflated) > 64 << 10  # the old blocks, read as they are
        (ws / "d0" / "f0.txt").write_text("changed\n")
        files["d0/f0.txt"] = b"changed\n"
        later = store.checkpoint(dirty={"d0/f0.txt"})
        _read_cold(store, later.id, files)
        assert store.fsck().ok
