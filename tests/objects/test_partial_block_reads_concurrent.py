"""A red-team pass over ``rewind29``'s partial block reads (branch ``redteam39``): a block
decoded to an object's end is cached short, and two threads reading one block at once (the
server's pool and its loop) must neither serve wrong bytes nor leave the cache poorer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.objects.test_block_parts import _payloads, _written

from turnback.errors import StoreDamaged
from turnback.objects import packs
from turnback.objects.packs import Loc, PackReader

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def test_a_partial_decode_finishing_late_does_not_replace_the_whole_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payloads = _payloads(80)
    reader, locs = _written(tmp_path, payloads)
    block = min(loc.block_off for loc in locs.values())
    rows = sorted((n for n in locs if locs[n].block_off == block), key=lambda n: locs[n].off)
    first, last = rows[0], rows[-1]
    decompress = PackReader._decompress
    calls: list[int] = []

    def racing(self: PackReader, loc: Loc, need: int) -> bytes:
        calls.append(need)
        out = decompress(self, loc, need)
        if len(calls) == 1:
            # the other thread, reading the block's last object meanwhile, decodes it whole
            # and caches it before this partial decode is stored
            assert self.read(locs[last]) == payloads[int(last, 16)]
        return out

    monkeypatch.setattr(PackReader, "_decompress", racing)
    assert reader.read(locs[first]) == payloads[int(first, 16)]
    assert len(calls) == 2
    # every object of the block is now a cache hit: before, the first read's short block
    # replaced the whole one and the next read past its end decoded the block again
    for n in rows:
        assert reader.read(locs[n]) == payloads[int(n, 16)]
    assert len(calls) == 2, f"the block was decoded again ({len(calls) - 2} more times)"


def test_a_frame_damaged_past_an_object_serves_it_and_caches_nothing_from_the_failure(
        tmp_path: Path) -> None:
    payloads = _payloads(80)
    reader, locs = _written(tmp_path, payloads)
    block = min(loc.block_off for loc in locs.values())
    rows = sorted((n for n in locs if locs[n].block_off == block), key=lambda n: locs[n].off)
    first, last = locs[rows[0]], locs[rows[-1]]
    path = reader.path_of(first.pack)
    data = bytearray(path.read_bytes())
    end = first.block_off + first.block_len
    data[end - 40: end] = bytes(40)  # the frame's last zstd block: zeroes
    path.write_bytes(bytes(data))
    assert reader.read(first) == payloads[int(rows[0], 16)]  # its zstd blocks are intact
    cached = dict(reader._blocks)
    with pytest.raises(StoreDamaged, match="fsck"):
        reader.read(last)
    assert {k: len(v) for k, v in reader._blocks.items()} == {
        k: len(v) for k, v in cached.items()}, "a failed decode was cached"


def _rle(n: int, last: bool) -> bytes:
    """A zstd RLE block: ``n`` times the byte A."""
    return ((n << 3) | (1 << 1) | int(last)).to_bytes(3, "little") + b"A"


def test_a_frame_header_of_any_descriptor_or_length_is_read_without_error() -> None:
    # probe (sound before): every descriptor byte at every length up to past its fields
    for fhd in range(256):
        for length in range(20):
            frame = (ZSTD_MAGIC + bytes([fhd]) + bytes(range(1, 40)))[:length]
            assert packs._one_block(frame) in (True, False)
    # a header whose last-block bit is one block on: True; a second RLE block after: False
    assert packs._one_block(ZSTD_MAGIC + bytes([0x00, 10 << 3]) + _rle(100, True))
    assert not packs._one_block(ZSTD_MAGIC + bytes([0x00, 10 << 3]) + _rle(100, False))


def test_a_frame_of_a_gibibyte_is_decoded_no_further_than_a_block(tmp_path: Path) -> None:
    # probe (sound before): 8,000 RLE blocks of 128 KiB behind a 16 MiB window, no size
    frame = ZSTD_MAGIC + bytes([0x00, 14 << 3]) + b"".join(
        _rle(128 << 10, i == 7999) for i in range(8000))
    (tmp_path / "x.pack").write_bytes(packs.PACK_MAGIC + frame)
    reader = PackReader(tmp_path)
    at = len(packs.PACK_MAGIC)
    assert reader.read(Loc("x", at, len(frame), 0, 10)) == b"A" * 10
    assert [len(b) for b in reader._blocks.values()] == [10]  # to the object's end only
    assert reader.read(Loc("x", at, len(frame), 150, 10)) == b"A" * 10
    assert [len(b) for b in reader._blocks.values()] == [packs.BLOCK_MAX]
    with pytest.raises(StoreDamaged, match="past any block's end"):
        reader.read(Loc("x", at, len(frame), packs.BLOCK_MAX - 5, 10))  # its index: refused
