"""What the pack tests share: text that compresses like a workspace's sources, and a count of
the block decompressions a read makes (``PackReader._decompress``)."""

from __future__ import annotations

import random

import pytest

from turnback.objects.packs import Loc, PackReader

_WORDS = [f"w{i:04d}" for i in range(3000)]


def varied_text(rng: random.Random) -> str:
    """200-1200 words drawn by ``rng``: 1-6 KB of text, as a source file's."""
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(200, 1200)))


def count_inflations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(bytes inflated, ``need``: the end in its block of the object wanted, or the
    block's whole when it is decoded whole) of each block decompression from now on."""
    seen: list[tuple[int, int]] = []
    decompress = PackReader._decompress

    def counted(self: PackReader, loc: Loc, need: int) -> bytes:
        out = decompress(self, loc, need)
        seen.append((len(out), need))
        return out

    monkeypatch.setattr(PackReader, "_decompress", counted)
    return seen
