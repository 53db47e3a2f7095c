"""``zstandard`` is imported where an object is first compressed or decompressed, not at
the object store's import (cold37). A process that cannot import it by then (removed or
half-upgraded while it ran) fails there, before a rewind writes its journal or a file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from turnback.store.facade import Store


def _journal_files(ws: Path) -> list[tuple[str, bytes]]:
    """The store's journal and operation log, with what they hold."""
    return sorted((p.name, p.read_bytes()) for p in (ws / ".turnback").rglob("*")
                  if p.is_file() and ("journal" in p.name or p.name.startswith("oplog")))


def test_a_rewind_that_cannot_import_zstandard_writes_nothing(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("one\n" * 100)
    (ws / "b.txt").write_text("two\n" * 100)
    with Store.open(ws) as store:
        first = store.checkpoint(label="first").id
    (ws / "a.txt").write_text("changed\n" * 100)
    with Store.open(ws) as store:
        store.checkpoint(label="second")
    before = _journal_files(ws)

    store = Store.open(ws)  # a fresh store: no compressor or decompressor made yet
    try:
        monkeypatch.setitem(sys.modules, "zstandard", None)  # ``import zstandard`` fails
        with pytest.raises(ImportError):
            store.rewind(first)
        assert (ws / "a.txt").read_text() == "changed\n" * 100  # nothing written
        assert _journal_files(ws) == before  # no journal begun, no operation logged
        monkeypatch.delitem(sys.modules, "zstandard")
        store.rewind(first)  # importable again: the same store goes on
        assert (ws / "a.txt").read_text() == "one\n" * 100
    finally:
        store.close()
