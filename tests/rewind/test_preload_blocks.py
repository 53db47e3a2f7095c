"""A rewind's targets are read block by block, the object ending last first in each block
(``Applier.preload``): a block's first read decodes it up to that object's end and the
others are found decoded, one decompression a block (``packs.SUB_BLOCK``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from turnback import Store
from turnback.objects.packs import Loc, PackReader
from turnback.rewind.apply import Applier


def _texts(seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    words = [f"w{i:04d}" for i in range(2000)]
    return {f"src/f{i:02d}.txt": " ".join(rng.choice(words) for _ in range(900)) + "\n"
            for i in range(10)}


def test_an_undos_targets_in_one_block_are_decoded_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails before: in path order the second target of a block, further in it than the
    first, had its block decoded again, whole."""
    ws = tmp_path / "ws"
    for rel, text in _texts(1).items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    with Store.open(ws, create=True) as store:
        first = store.checkpoint(label="first")
        for rel, text in _texts(2).items():  # ~45 KB: one file block of several zstd blocks
            (ws / rel).write_text(text)
        store.checkpoint(label="second")
    blocks: list[tuple[str, int]] = []
    decompress = PackReader._decompress

    def counted(self: PackReader, loc: Loc, need: int) -> bytes:
        blocks.append((loc.pack, loc.block_off))
        return decompress(self, loc, need)

    preload = Applier.preload
    in_preload: list[tuple[str, int]] = []

    def watched(self: Applier, plan: object) -> None:
        blocks.clear()
        preload(self, plan)  # type: ignore[arg-type]
        in_preload.extend(blocks)

    monkeypatch.setattr(PackReader, "_decompress", counted)
    monkeypatch.setattr(Applier, "preload", watched)
    with Store.open(ws) as store:  # a fresh reader: no block cached
        store.rewind(first.id)
    assert len(in_preload) >= 1
    assert len(in_preload) == len(set(in_preload)), in_preload
    for rel, text in _texts(1).items():
        assert (ws / rel).read_text() == text
