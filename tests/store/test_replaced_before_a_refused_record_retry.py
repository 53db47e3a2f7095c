"""A rewind whose op-log line landed but whose journal's end was refused, retried at the
next write (``_record_refused``) after its ``--store`` store was replaced by a copy.

``trust35`` sent the record's steps through the held root, but the retry's branch for a
rewind already in the op log ended the journal by path: the copy at the store's path had
its journal emptied, and the store this process opened kept its own. Now that end goes
through the held root too: the copy is left as it was put there, the store opened gets
its journal's end."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.fs.osflags import DESCRIPTORS
from turnback.rewind.oplog import OpLog

from .swap_setup import put_back, replace_store
from .test_replaced_store_after_journal import _contents


@pytest.mark.skipif(not DESCRIPTORS, reason="by path the retry is refused as replaced")
def test_the_retrys_journal_end_goes_into_the_store_opened(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir, moved = tmp_path / "named-store", tmp_path / "moved"

    def refused(*_a: Any, **_kw: Any) -> None:
        raise OSError(5, "Input/output error")

    with Store.open(ws, store_dir=store_dir) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        with mock.patch.object(OpLog, "end", refused), pytest.raises(OSError):
            store.rewind(first.id)
        assert store._refused_record is not None
        replace_store(store_dir, moved, "a copy", moved)
        at_swap = _contents(store_dir)
        assert (store_dir / "journal.json").read_bytes()  # the copy's, pending
        try:
            store.finish_rewind()  # the retry, as the next write makes it
        except TurnbackError:
            pass
        assert _contents(store_dir) == at_swap  # before: the copy's journal emptied
        assert not (moved / "journal.json").read_bytes()  # the store opened: ended
    put_back(store_dir, moved)
    with Store.open(ws, store_dir=store_dir) as again:
        assert [op["op"] for op in again.oplog.all()] == ["rewind"]
        assert not again.oplog.pending()
    assert (ws / "f.txt").read_text() == "one\n"
