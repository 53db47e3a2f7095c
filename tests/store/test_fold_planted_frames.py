"""A red-team pass over ``atonce27`` (branch ``redteam33``): a server's raw held frames
and their fold (``Store.fold_held``), as an attacker who can write any file in the store
and an unlucky user see them (docs/RELIABILITY.md, "A red-team pass over ``atonce27``")."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged
from turnback.objects import packlog
from turnback.objects.objectstore import BLOB
from turnback.objects.packs import RAW_BLOCK
from wsutil import age_tree, write

_RAW_START = b"\x28\xb5\x2f\xfd\xa0"  # packs.raw_frame's magic and header byte


def _logs(root: Path) -> list[Path]:
    folder = root / "objects" / "log"
    return [folder / n for n in packlog.log_names(folder)]


def _held(ws: Path, data: bytes) -> tuple[Store, str]:
    """A store whose last checkpoint's blob ``big.bin`` went out in a raw frame."""
    write(ws, "a.txt", "a\n")
    age_tree(ws)
    store = Store.open(ws, create=True)
    store.checkpoint(label="walk")
    store.merge_logs(at_least=0)
    store.objects.raw_held = True
    (ws / "big.bin").write_bytes(data)
    age_tree(ws)
    cp = store.checkpoint(label="held")
    entry = store.trees.lookup(cp.tree, "big.bin")
    assert entry is not None
    return store, entry.hash


def _size(b: bytes, i: int, by: int) -> bytes:
    n = struct.unpack("<I", b[i + 5: i + 9])[0]
    return b[:i + 5] + struct.pack("<I", n + by) + b[i + 9:]


_MUTATIONS: dict[str, Callable[[bytes, int], bytes]] = {
    "content size one more": lambda b, i: _size(b, i, 1),
    "content size one less": lambda b, i: _size(b, i, -1),
    "a block size past the frame": lambda b, i: (
        b[:i + 9] + ((0x1FFFFF << 3) | 1).to_bytes(3, "little") + b[i + 12:]),
    "a byte of the raw block flipped": lambda b, i: b[:i + 20] + bytes([b[i + 20] ^ 1])
    + b[i + 21:],
}


@pytest.mark.parametrize("size", [1000, RAW_BLOCK, RAW_BLOCK + 1])
@pytest.mark.parametrize("mutation", sorted(_MUTATIONS))
def test_a_planted_raw_frame_reads_as_damaged_never_as_other_bytes(
        ws: Path, size: int, mutation: str) -> None:
    """Probed and sound (passes before and after): the reader's zstd and the object's hash
    stand between a raw frame altered in its log and the bytes handed back."""
    data = os.urandom(size)
    store, name = _held(ws, data)
    store.close()
    (log,) = [p for p in _logs(ws / ".turnback") if _RAW_START in p.read_bytes()]
    b = log.read_bytes()
    log.write_bytes(_MUTATIONS[mutation](b, b.index(_RAW_START)))
    with Store.open(ws) as other, pytest.raises(StoreDamaged):
        got = other.objects.get(BLOB, name)
        assert got == data  # not reached: if it were, the bytes must be the right ones


def test_the_log_made_ahead_is_not_removed_at_close_once_another_hand_wrote_in_it(
        ws: Path) -> None:
    """Fails before: ``close_log`` removed the log a fold made ahead whenever this writer
    had not written to it, by its name, though the file had grown since (another hand's
    frame in it: a checkpoint another reader had listed, lost with its objects); now only
    a file still empty goes."""
    store, _ = _held(ws, b"held\n" * 100)
    assert store.fold_held() is True
    (ahead,) = _logs(ws / ".turnback")
    assert ahead.stat().st_size == 0
    with ahead.open("ab") as f:  # what another hand put there
        f.write(packlog.LOG_MAGIC + b"x" * 64)
    store.close()
    assert ahead.exists()
