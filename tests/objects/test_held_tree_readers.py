"""Tree blocks of a held batch at ``HELD_TREE_LEVEL`` (-5, branch atonce26) as every reader
meets them: a later open, a plain zstd reader bounded as the packs' is, a merge that packs
them again, one killed before its logs went, fsck (red-team pass redteam31: sound)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import zstandard

from turnback import Store
from turnback.objects import objectstore, packs
from turnback.objects.packs import BLOCK_MAX, HELD_TREE_LEVEL, TREE_LEVEL
from turnback.store.logmerge import merge_logs


class _Spy:
    """``packs._compressor`` that notes each block's level and compressed bytes."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, bytes, bytes]] = []  # level, raw, compressed
        self._real = packs._compressor

    def __call__(self, level: int) -> Any:
        real, blocks = self._real(level), self.blocks

        class _C:
            def compress(self, raw: bytes) -> bytes:
                out: bytes = real.compress(raw)
                blocks.append((level, raw, out))
                return out

        return _C()


def _checkpoints(ws: Path, store: Store, n: int) -> dict[str, dict[str, str]]:
    """``n`` checkpoints, each changing a file in a folder of its own (a tree or three
    new a checkpoint); what each holds."""
    held: dict[str, dict[str, str]] = {}
    for i in range(n):
        d = ws / f"d{i}" / "sub"
        d.mkdir(parents=True)
        (d / "f.txt").write_text(f"file {i}\n")
        (ws / "top.txt").write_text(f"top {i}\n")
        cp = store.checkpoint(dirty={f"d{i}/sub/f.txt", "top.txt"})
        held[cp.id] = {f"d{i}/sub/f.txt": f"file {i}\n", "top.txt": f"top {i}\n"}
    return held


def _read_all(ws: Path, held: dict[str, dict[str, str]]) -> None:
    with Store.open(ws) as store:  # a new open: nothing from the writer's memory
        for cp, files in held.items():
            for path, text in files.items():
                assert store.file_content(cp, path).text == text
        assert store.fsck().ok


@pytest.mark.parametrize("killed", [False, True])
def test_held_trees_at_the_fast_level_are_read_merged_and_packed_again(
        tmp_path: Path, killed: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "top.txt").write_text("top\n")
    spy = _Spy()
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        store.save_scan_cache()
        with mock.patch.object(packs, "_compressor", spy):
            held = _checkpoints(ws, store, 6)
    trees = [(raw, out) for level, raw, out in spy.blocks if level == HELD_TREE_LEVEL]
    assert len(trees) == 6 and all(raw.startswith(b"tree\0") for raw, _ in trees)
    for raw, out in trees:  # a frame any zstd reads, bounded as the packs' reader is
        frame = zstandard.get_frame_parameters(out)
        assert frame.content_size == len(raw) and frame.window_size <= BLOCK_MAX
        d = zstandard.ZstdDecompressor(max_window_size=BLOCK_MAX)
        assert d.decompress(out, max_output_size=BLOCK_MAX) == raw
    _read_all(ws, held)

    objects = ws / ".turnback" / "objects"
    packed = set((objects / "pack").glob("*.pack"))
    merged = _Spy()
    with Store.open(ws) as store, mock.patch.object(packs, "_compressor", merged):
        if killed:  # the new pack written, the merge killed before the first log went
            with mock.patch.object(objectstore, "unlink_object_file",
                                   side_effect=KeyboardInterrupt), \
                    pytest.raises(KeyboardInterrupt):
                merge_logs(store, at_least=0)
            assert set((objects / "pack").glob("*.pack")) - packed  # the merge's pack
            assert os.listdir(objects / "log")  # and every log still there
            _read_all(ws, held)
        assert merge_logs(store, at_least=0) is not None
    levels = {level for level, raw, _ in merged.blocks if raw.startswith(b"tree\0")}
    assert levels == {TREE_LEVEL}  # packed again at the pack's level, not -5
    _read_all(ws, held)
    assert os.listdir(objects / "log") == []
