"""Which zstd level a block is compressed at (``PackWriter._level``): a small checkpoint's
log frame compresses its last partial file block fast; a pack keeps the configured level."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import zstandard

from turnback.objects import packs
from turnback.objects.packs import (
    BLOCK_RAW,
    HELD_BYTES,
    HELD_LEVEL,
    HELD_TREE_LEVEL,
    TREE_LEVEL,
    PackWriter,
)


def _levels_used(writer: PackWriter, payloads: list[bytes]) -> list[int]:
    used: list[int] = []
    real = packs._compressor

    def spy(level: int) -> zstandard.ZstdCompressor:
        used.append(level)
        return real(level)

    with mock.patch.object(packs, "_compressor", spy):
        for p in payloads:
            writer.add(os.urandom(32).hex(), p)
        writer.seal()
    return used


def _blob(n: int) -> bytes:
    return b"blob\0" + os.urandom(n // 2).hex().encode()[:n]


def test_a_small_held_batch_compresses_its_files_at_the_fast_level(tmp_path: Path) -> None:
    used = _levels_used(PackWriter(tmp_path, 3, in_memory=True), [_blob(5000)] * 3)
    assert used == [HELD_LEVEL]
    used = _levels_used(PackWriter(tmp_path, 3, in_memory=True), [b"tree\0" + b"t" * 100])
    assert used == [HELD_TREE_LEVEL]


def test_held_trees_go_faster_than_packed_ones_and_a_lower_configured_level_stays(
        tmp_path: Path) -> None:
    # an at-once checkpoint's trees are on the answer's path; a pack's (a merge's, a first
    # checkpoint's) keep TREE_LEVEL, and a configured level lower still is kept by both
    assert HELD_TREE_LEVEL < TREE_LEVEL
    tree = [b"tree\0" + os.urandom(200)]
    writer = PackWriter(tmp_path, 3)
    try:
        assert _levels_used(writer, tree) == [TREE_LEVEL]
    finally:
        writer.abort()
    low = HELD_TREE_LEVEL - 3
    assert _levels_used(PackWriter(tmp_path, low, in_memory=True), tree) == [low]


def test_a_small_held_batch_compresses_its_full_blocks_fast_too(tmp_path: Path) -> None:
    # files of ~6.5 KB: one full block and a partial one, both on the answer's path
    used = _levels_used(PackWriter(tmp_path, 3, in_memory=True),
                        [_blob(6_600)] * (BLOCK_RAW // 6_600 + 1) + [_blob(6_600)])
    assert used == [HELD_LEVEL, HELD_LEVEL]


def test_full_blocks_and_packs_keep_the_configured_level(tmp_path: Path) -> None:
    # a large held batch (a first checkpoint's): its blocks past HELD_BYTES keep level 3
    big = [_blob(BLOCK_RAW + 1) for _ in range(4 * HELD_BYTES // BLOCK_RAW + 4)]
    used = _levels_used(PackWriter(tmp_path, 3, in_memory=True), big)
    assert used[0] == HELD_LEVEL and used[-1] == 3
    assert used.count(HELD_LEVEL) <= 2 * HELD_BYTES // BLOCK_RAW
    writer = PackWriter(tmp_path, 3)  # a pack written from the start (a merge's)
    try:
        assert _levels_used(writer, [_blob(5000)]) == [3]
    finally:
        writer.abort()


def test_a_configured_level_below_the_fast_one_is_kept(tmp_path: Path) -> None:
    assert _levels_used(PackWriter(tmp_path, -5, in_memory=True), [_blob(5000)]) == [-5]
    # zstd's level 0 is its default, 3: lowered too
    assert _levels_used(PackWriter(tmp_path, 0, in_memory=True), [_blob(5000)]) == [HELD_LEVEL]


def test_raw_frames_read_back_as_any_block_at_every_size(tmp_path: Path) -> None:
    """A server's held blocks (``raw_frame``): valid zstd frames, read by the pack reader's
    own decompressor, across the 128 KiB raw block bound."""
    d = zstandard.ZstdDecompressor(max_window_size=packs.BLOCK_MAX)
    for n in (0, 1, packs.RAW_BLOCK - 1, packs.RAW_BLOCK, packs.RAW_BLOCK + 1,
              3 * packs.RAW_BLOCK + 7):
        data = os.urandom(n)
        frame = packs.raw_frame(data)
        assert len(frame) == len(data) + 9 + 3 * max(1, -(-n // packs.RAW_BLOCK))
        assert d.decompress(frame, max_output_size=packs.BLOCK_MAX) == data
        assert d.stream_reader(frame).read(n + 1) == data


def test_a_raw_held_writer_stores_its_small_batch_raw_and_a_pack_keeps_its_level(
        tmp_path: Path) -> None:
    used = _levels_used(PackWriter(tmp_path, 3, in_memory=True, raw_held=True),
                        [_blob(5000), b"tree\0" + b"t" * 100])
    assert used == []  # no compressor asked for: both blocks raw
    writer = PackWriter(tmp_path, 3, in_memory=True, raw_held=True)
    _levels_used(writer, [_blob(5000)])
    assert writer.raw_blocks == 1
    blocks, _ = writer.frame_parts()
    assert blocks[0][5 + 4] >> 1 & 3 == 0  # the first block's type: raw
    big = [_blob(BLOCK_RAW + 1) for _ in range(4 * HELD_BYTES // BLOCK_RAW + 4)]
    assert _levels_used(PackWriter(tmp_path, 3, in_memory=True, raw_held=True), big)[-1] == 3
    pack = PackWriter(tmp_path, 3, raw_held=True)  # a pack written from the start
    try:
        assert _levels_used(pack, [_blob(5000)]) == [3]
    finally:
        pack.abort()
