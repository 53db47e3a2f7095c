"""A packed object's read makes no path for its loose file (``ObjectStore._raw``): two
pathlib joins a read, for a file only read when no pack or log holds the object; a name
that is no object name is refused all the same, before any look-up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import blake3
import pytest

from turnback import Store
from turnback.errors import StoreDamaged
from turnback.objects.objectstore import ObjectStore
from wsutil import write


def _paths_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    real = ObjectStore.path

    def path(self: ObjectStore, name: Any) -> Path:
        made.append(name)
        return real(self, name)

    monkeypatch.setattr(ObjectStore, "path", path)
    return made


def test_a_packed_read_makes_no_loose_path(store: Store, ws: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "a.txt", "held in the checkpoint's log frame\n")
    store.checkpoint()
    name = blake3.blake3(b"blob\0held in the checkpoint's log frame\n").hexdigest()
    assert store.objects.packs.locate(name) is not None, "the blob is not packed"
    made = _paths_made(monkeypatch)
    assert store.objects.get(b"blob", name) == b"held in the checkpoint's log frame\n"
    assert made == []


@pytest.mark.parametrize("bad", ["../../etc/passwd", "AB" * 32, "ab" * 31, 7])
def test_a_name_that_is_no_object_name_is_refused(store: Store, bad: Any) -> None:
    with pytest.raises(StoreDamaged, match="not 64 lowercase hex digits"):
        store.objects.get(b"blob", bad)
