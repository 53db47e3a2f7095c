"""A ``--store`` store replaced between two steps of a rewind's (or an undo's) record, the
steps ``trust35`` routed through one ``dup`` of the held root: after its session event
(before its op-log line) and after its op-log line (before the journal's end); replaced by
a copy, by a link to a copy elsewhere, or with only its ``sessions/`` swapped for a link.
What is at the path gets nothing after the swap; once the store is put back, the rewind is
recorded once (one op-log line, one event) and the workspace holds what it wrote.

By path (``TURNBACK_FS_PATHS=1``) the step after the swap is refused as "replaced"
(``Conflict``); after the op-log line, the journal's end in the ``PathFolder`` was refused
with the folder's bare ``OSError`` ("[Errno 40] was replaced while Turnback used it"), out
of the rewind and the undo: an internal error (-32603) to the server's client."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import Conflict
from turnback.events import Kind
from turnback.rewind.oplog import OpLog
from turnback.store.session_ops import SessionOps

from .swap_setup import put_back, replace_store
from .test_replaced_store_after_journal import _contents


def _swap(store_dir: Path, moved: Path, put: str, elsewhere: Path) -> None:
    if put == "sessions swapped for a link":
        sessions = store_dir / "sessions"
        shutil.copytree(sessions, elsewhere)
        shutil.rmtree(sessions)
        os.symlink(elsewhere, sessions)
    elif put == "a link to a copy":
        shutil.copytree(store_dir, elsewhere, symlinks=True)
        replace_store(store_dir, moved, "a link", elsewhere)
    else:
        replace_store(store_dir, moved, "a copy", moved)


def _unswap(store_dir: Path, moved: Path, put: str) -> None:
    if put == "sessions swapped for a link":
        link = store_dir / "sessions"
        target = Path(os.readlink(link))
        link.unlink()
        shutil.copytree(target, link)
    else:
        put_back(store_dir, moved)


@pytest.mark.parametrize("put", ["a copy", "a link to a copy", "sessions swapped for a link"])
@pytest.mark.parametrize("after", ["the event", "the op-log line"])
@pytest.mark.parametrize("verb", ["rewind", "undo"])
def test_a_swap_between_the_records_steps(tmp_path: Path, verb: str, after: str,
                                         put: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store"
    moved, elsewhere = tmp_path / "moved", tmp_path / "elsewhere"
    at_swap: dict[str, bytes] = {}
    seen = elsewhere if put != "a copy" else store_dir

    def swapped() -> None:
        _swap(store_dir, moved, put, elsewhere)
        at_swap.update(_contents(seen))

    real_append, real_add = SessionOps.append, OpLog.add

    def append(self: Any, sid: str, kind: str, *a: Any, **kw: Any) -> Any:
        out = real_append(self, sid, kind, *a, **kw)
        if kind == Kind.REWIND and after == "the event":
            swapped()
        return out

    def add(self: OpLog, *a: Any, **kw: Any) -> None:
        real_add(self, *a, **kw)
        if after == "the op-log line":
            swapped()

    with Store.open(ws, store_dir=store_dir) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        if verb == "undo":
            store.rewind(first.id)
        with mock.patch.object(SessionOps, "append", append), \
                mock.patch.object(OpLog, "add", add):
            try:
                if verb == "undo":
                    store.undo()
                else:
                    store.rewind(first.id)
            except Conflict as exc:  # refused (by path): left to the next open
                assert "replaced" in str(exc)  # before, after the op-log line: OSError
        assert at_swap, "swapped"
        assert _contents(seen) == at_swap  # nothing after the swap where the path led
        _unswap(store_dir, moved, put)
    target = "two\n" if verb == "undo" else "one\n"
    assert (ws / "f.txt").read_text() == target
    with Store.open(ws, store_dir=store_dir) as again:
        ops = again.oplog.all()
        assert len({op["id"] for op in ops}) == len(ops)
        assert [op["op"] for op in ops] == (["rewind", "undo"] if verb == "undo"
                                           else ["rewind"])
        assert not again.oplog.pending()
        sid = ops[-1]["session"]
        events = [e.id for e in again.backend.load(sid).events if e.kind == Kind.REWIND]
        assert len(events) == len(set(events)) == len(ops)
    assert (ws / "f.txt").read_text() == target
