"""A file block's zstd frame is cut into zstd blocks at object ends (``packs.SUB_BLOCK``), and
a cold read decodes its block only up to its object's end: zstd decodes a block whole, so a
rewind's target early in a 64 KiB block no longer pays for the rest of it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import zstandard

from pack_reads import count_inflations, varied_text
from turnback.objects import packs
from turnback.objects.packs import BLOCK_RAW, SUB_BLOCK, Loc, PackReader, PackWriter


def _payloads(n: int, seed: int = 3) -> list[bytes]:
    """Blobs of 1-6 KB of varied text (as a workspace's source files)."""
    rng = random.Random(seed)
    return [b"blob\0" + varied_text(rng).encode() for _ in range(n)]


def _block_ends(frame: bytes) -> list[int]:
    """The decoded length after each zstd block of ``frame`` (fed to zstd block by block)."""
    fhd = frame[4]
    single = (fhd >> 5) & 1
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
    d = zstandard.ZstdDecompressor().decompressobj()
    out = d.decompress(frame[:at])
    ends: list[int] = []
    while True:
        head = int.from_bytes(frame[at: at + 3], "little")
        size = 1 if (head >> 1) & 3 == 1 else head >> 3  # an RLE block holds one byte
        out += d.decompress(frame[at: at + 3 + size])
        at += 3 + size
        ends.append(len(out))
        if head & 1:
            return ends


def _written(tmp_path: Path, payloads: list[bytes]) -> tuple[PackReader, dict[str, Loc]]:
    names = [f"{i:064x}" for i in range(len(payloads))]
    writer = PackWriter(tmp_path, 3)
    for name, p in zip(names, payloads, strict=True):
        writer.add(name, p)
    writer.finish(fsync=False)
    reader = PackReader(tmp_path)
    reader.refresh()
    return reader, {n: loc for n in names if (loc := reader.locate(n)) is not None}


def test_a_file_block_is_cut_into_zstd_blocks_at_object_ends(tmp_path: Path) -> None:
    reader, locs = _written(tmp_path, _payloads(80))
    by_block: dict[int, list[Loc]] = {}
    for loc in locs.values():
        by_block.setdefault(loc.block_off, []).append(loc)
    full = [rows for rows in by_block.values() if sum(r.length for r in rows) >= BLOCK_RAW]
    assert full, "the payloads fill no block: the test checks nothing"
    path = reader.path_of(full[0][0].pack)
    for rows in full:
        with open(path, "rb") as f:
            f.seek(rows[0].block_off)
            frame = f.read(rows[0].block_len)
        ends = _block_ends(frame)
        object_ends = {r.off + r.length for r in rows}
        largest = max(r.length for r in rows)
        assert len(ends) >= BLOCK_RAW // (SUB_BLOCK + largest), ends
        assert set(ends) <= object_ends, "a zstd block ends inside an object"
        gaps = [b - a for a, b in zip([0, *ends], ends, strict=False)]
        assert all(g >= SUB_BLOCK for g in gaps[:-1]) and max(gaps) < SUB_BLOCK + largest


@pytest.fixture
def inflated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(bytes inflated, end of the object wanted in its block) of each block decompression."""
    return count_inflations(monkeypatch)


def test_a_cold_read_stops_at_its_objects_end_and_a_block_inflates_twice_at_most(
        tmp_path: Path, inflated: list[tuple[int, int]]) -> None:
    payloads = _payloads(80)
    reader, locs = _written(tmp_path, payloads)
    want = {n: payloads[int(n, 16)] for n in locs}
    first = min(locs, key=lambda n: (locs[n].block_off, locs[n].off))
    assert reader.read(locs[first]) == want[first]
    assert inflated == [(locs[first].length, locs[first].length)]  # not the block's 64 KiB
    # every object, in an order that goes back and forth in each block: a block is decoded
    # once to an object's end and once whole at most, never once per object
    order = sorted(locs, key=lambda n: (locs[n].block_off, (locs[n].off * 7919) % 65536))
    for n in order:
        assert reader.read(locs[n]) == want[n]
    per_block: dict[int, int] = {}
    for n in locs:
        per_block.setdefault(locs[n].block_off, 0)
    assert len(inflated) <= 2 * len(per_block)


def test_a_block_of_one_zstd_block_is_kept_whole_at_its_first_read(
        tmp_path: Path, inflated: list[tuple[int, int]]) -> None:
    # trees (and packs of earlier versions) are one zstd block a frame: decoding them is
    # all or nothing, so the first read keeps the whole and the next ones are cache hits
    trees = [b"tree\0" + bytes(range(256)) * 4 for _ in range(30)]
    trees = [t + f"{i}".encode() for i, t in enumerate(trees)]
    reader, locs = _written(tmp_path, trees)
    for n in sorted(locs, key=lambda n: locs[n].off):
        assert reader.read(locs[n]) == trees[int(n, 16)]
    assert len(inflated) == 1
    assert inflated[0][0] == sum(len(t) for t in trees)
    assert packs._one_block(b"\x28\xb5\x2f\xfd") is False  # too short to say: zstd's read says
