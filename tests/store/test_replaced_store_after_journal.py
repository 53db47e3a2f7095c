"""A rewind (and an undo) of a ``--store`` store replaced after its journal was written.

The rewind's steps after its journal went by path: the rewind's session event, its
operation-log line and the journal's end (and, where those were refused, the journal's
mark that its files are in place). A copy of the store put at its path got the rewind's
event and its op-log line, and the journal left pending in the store looked at made its
next open apply the rewind again. Now they go through the held root (``trust35``): with
descriptors into the store this process opened, wherever it is now; by path
(``TURNBACK_FS_PATHS=1``) refused: a rewind at its safety checkpoint's listing, before its
files, its journal retracted where it was written (``trust36``: it was left pending, and
that store's next open applied the refused rewind); an undo at its event, after its
files, its journal left for the next open to finish. What is at the path gets nothing.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.fs.osflags import DESCRIPTORS
from turnback.rewind.oplog import OpLog

from .swap_setup import put_back, replace_store


def _contents(root: Path) -> dict[str, bytes]:
    """Every file at or below ``root`` and its bytes (the stat cache left out: trust34's
    test follows it)."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "stat.bin"}


def _swapped_after_begin(store: Store, moved: Path) -> tuple[dict[str, bytes], mock._patch]:
    """``OpLog.begin`` patched to put a copy of the store at its path right after the
    journal is written; the dict gets what the path held then."""
    real = OpLog.begin
    at_swap: dict[str, bytes] = {}

    def then_replaced(self: OpLog, *a: object, **kw: object) -> object:
        out = real(self, *a, **kw)  # type: ignore[arg-type]
        replace_store(store.root, moved, "a copy", moved)
        at_swap.update(_contents(store.root))
        return out

    return at_swap, mock.patch.object(OpLog, "begin", then_replaced)


def _last_op(root: Path) -> bytes:
    lines = (root / "oplog.jsonl").read_bytes().splitlines() if (
        root / "oplog.jsonl").exists() else []
    return lines[-1] if lines else b""


@pytest.mark.parametrize("verb", ["rewind", "rewind, finished later", "undo"])
def test_nothing_after_the_journal_where_the_path_leads(tmp_path: Path, verb: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    store_dir = tmp_path / "named-store"
    moved = tmp_path / "moved"
    error: Exception | None = None
    with Store.open(ws, store_dir=store_dir) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        if verb == "undo":
            store.rewind(first.id)
        at_swap, patch = _swapped_after_begin(store, moved)
        with patch:
            try:
                if verb == "undo":
                    store.undo()
                else:
                    store.rewind(first.id, finish_later=verb.endswith("later"))
                    store.finish_rewind()
            except TurnbackError as exc:
                error = exc
        left = _contents(store.root)
    assert at_swap, "the copy was put at the path"
    assert left == at_swap  # no event, no op-log line, no journal's end in the copy
    # by path, a rewind is refused at its safety checkpoint's listing, before its files:
    # its journal retracted where it was written, so no open applies it (trust36; it was
    # left pending, and the next open applied the rewind the user was told was refused)
    refused_before_files = not DESCRIPTORS and verb != "undo"
    target = "two\n" if verb == "undo" or refused_before_files else "one\n"
    put_back(store_dir, moved)
    if DESCRIPTORS:  # recorded in the store looked at, its journal ended
        assert error is None
        assert (ws / "f.txt").read_text() == target
        assert b'"newHead":"rw-' in _last_op(store_dir)
        assert not (store_dir / "journal.json").read_bytes()
    elif refused_before_files:
        assert error is not None and "replaced" in str(error)
        assert (ws / "f.txt").read_text() == "two\n"
        assert not (store_dir / "journal.json").read_bytes()
    else:  # refused at its event, after its files (an undo, whose safety checkpoint
        # needed no frame): the journal left in the store opened, for its next open to
        # finish
        assert error is not None and "replaced" in str(error)
        assert (store_dir / "journal.json").read_bytes()
    with Store.open(ws, store_dir=store_dir) as again:
        ops = again.oplog.all()
        assert len({op["id"] for op in ops}) == len(ops)
        assert not again.oplog.pending()
        if refused_before_files:
            assert not ops  # never applied
        else:
            assert ops[-1]["op"] == ("undo" if verb == "undo" else "rewind")
    assert (ws / "f.txt").read_text() == target
