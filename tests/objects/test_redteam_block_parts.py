"""A red-team pass over ``rewind29``'s partial block reads (branch ``redteam39``): a block
decoded to an object's end is cached short, and two threads reading one block at once (the
server's pool and its loop) must neither serve wrong bytes nor leave the cache poorer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.objects.test_block_parts import _payloads, _written

from turnback.errors import StoreDamaged
from turnback.objects.packs import Loc, PackReader


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
