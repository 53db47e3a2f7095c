"""What follows a checkpoint's record, in a ``--store`` store replaced after its root's look.

``test_replaced_store_record.py`` swaps the store inside ``ObjectStore.commit``, between
the look (``HeldFolder.replaced``) and the record, which goes through the held root since
``trust31``. The record's lock (``checkpoints.jsonl.lock``) and the checkpoint's session
event were still reached by path: the lock file was made in what was put there (a link's
target, an empty folder), a lock that serializes nothing with a writer of the moved store,
and with a copy of the store put there the event went into the copy's session file, naming
a checkpoint the copy's ``checkpoints.jsonl`` lacks. Both now go through the same held
root (``CheckpointOps._record``), and a full checkpoint's stat cache is not saved by path
into what was put there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback.errors import TurnbackError
from turnback.fs.osflags import DESCRIPTORS
from turnback.objects.objectstore import ObjectStore
from turnback.store.checkpoint_index import CheckpointIndex

from .swap_setup import one_checkpoint_then_an_edit, replaced_after


def _files(root: Path) -> list[str]:
    """Every file and folder at or below ``root`` (a link followed: what it names)."""
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _swapped_checkpoint(tmp_path: Path, put: str,
                        how: str) -> tuple[Path, Path, list[str], str | None]:
    """A second checkpoint (``how``) of a ``--store`` store moved to ``moved`` and ``put``
    in its place inside ``ObjectStore.commit``: (root, moved, what the checkpoint left at
    the root's path and in ``elsewhere`` (the link's target), its id or None where
    refused). Looked at before the store's close: the close's own steps (the gc lock, by
    path) are not the checkpoint's."""
    with one_checkpoint_then_an_edit(tmp_path) as (store, at):
        root, moved, elsewhere = store.root, at.moved, at.elsewhere
        cp_id: str | None = None
        # after the look, before the record
        with replaced_after(ObjectStore, "commit", root, moved, put, elsewhere):
            try:
                if how == "checkpoint":
                    cp_id = store.checkpoint(label="second").id
                else:
                    cp = store.checkpoint_now({"f.txt"}, label="second")
                    cp_id = cp.id if cp is not None else None
            except TurnbackError:
                cp_id = None
        left = _files(root) + _files(elsewhere)
    return root, moved, left, cp_id


@pytest.mark.parametrize("how", ["checkpoint", "checkpoint_now"])
@pytest.mark.parametrize("put", ["a link", "an empty folder"])
def test_nothing_of_the_checkpoint_where_the_path_leads(tmp_path: Path, put: str,
                                                       how: str) -> None:
    _root, moved, left, cp_id = _swapped_checkpoint(tmp_path, put, how)
    # no lock file, no stat cache, nothing in the link's target or the empty folder
    assert left == []
    session = _lines(moved / "sessions" / "workspace.jsonl")
    if DESCRIPTORS:  # record, lock and event in the store that was looked at
        assert cp_id is not None
        assert cp_id.encode() in _lines(moved / "checkpoints.jsonl")[-1]
        assert f'"checkpoint":"{cp_id}"'.encode() in session[-1]
        assert (moved / "checkpoints.jsonl.lock").is_file()
    else:  # folders by path: refused at the lock's look, before the record and the event
        assert cp_id is None
        assert len(_lines(moved / "checkpoints.jsonl")) == 1
        assert b'"second"' not in b"".join(session)


@pytest.mark.parametrize("how", ["checkpoint", "checkpoint_now"])
def test_a_copy_put_there_gets_no_event_naming_a_record_it_lacks(tmp_path: Path,
                                                                  how: str) -> None:
    root, moved, _left, cp_id = _swapped_checkpoint(tmp_path, "a copy", how)
    copy_session = _lines(root / "sessions" / "workspace.jsonl")
    copy_records = _lines(root / "checkpoints.jsonl")
    assert len(copy_records) == 1 and b'"second"' not in b"".join(copy_session)
    moved_session = _lines(moved / "sessions" / "workspace.jsonl")
    if DESCRIPTORS:
        assert cp_id is not None
        assert cp_id.encode() in _lines(moved / "checkpoints.jsonl")[-1]
        assert f'"checkpoint":"{cp_id}"'.encode() in moved_session[-1]
    else:  # the copy is another folder at the path: refused, the record left in the log
        assert cp_id is None and b'"second"' not in b"".join(moved_session)
    # every event naming a checkpoint names one its own store records
    for store in (root, moved):
        named = {line.split(b'"checkpoint":"')[1][:12]
                 for line in _lines(store / "sessions" / "workspace.jsonl")
                 if b'"checkpoint":"' in line}
        recorded = b"".join(_lines(store / "checkpoints.jsonl"))
        assert named and all(cid in recorded for cid in named)


def test_a_copy_put_there_after_the_record_gets_no_event(tmp_path: Path) -> None:
    """The swap between the record and the event: by path (``PathFolder``), ``sessions/``
    is looked up by its path, which leads into the copy; the root's look after it refuses."""
    with one_checkpoint_then_an_edit(tmp_path, "two\n") as (store, at):
        root, moved = store.root, at.moved
        # after the record, before the event
        with replaced_after(CheckpointIndex, "add", root, moved, "a copy", at.elsewhere):
            try:
                cp_id: str | None = store.checkpoint(label="second").id
            except (TurnbackError, OSError):
                cp_id = None
    assert b'"second"' not in (root / "sessions" / "workspace.jsonl").read_bytes()
    if DESCRIPTORS:
        assert cp_id is not None
        assert f'"checkpoint":"{cp_id}"'.encode() in _lines(
            moved / "sessions" / "workspace.jsonl")[-1]
