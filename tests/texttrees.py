"""Text trees as formats 1 and 2 wrote them (``<mode> <hash> <size> <name>\\0`` lines,
sorted by name bytes): a v2 store's trees, which format 3 reads as they are."""

from __future__ import annotations

import os

import pytest

import turnback.objects.trees as trees_mod
from turnback.objects.trees import Tree


def encode_text(tree: Tree) -> bytes:
    items = sorted(((os.fsencode(n), e) for n, e in tree.items()), key=lambda t: t[0])
    return b"".join(f"{e.mode} {e.hash} {e.size} ".encode() + name + b"\0" for name, e in items)


def write_text_trees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process write trees as format 2 did (text), as an older Turnback would."""
    monkeypatch.setattr(trees_mod, "_encode_named", lambda tree: (None, encode_text(tree)))
    monkeypatch.setattr(trees_mod, "_patched", lambda *args: None)
