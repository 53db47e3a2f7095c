"""A ``--store`` store replaced between the root's look and the checkpoint's record, as the
user is told it, and what is left where its path leads (redteam40, over trust31).

trust31 sent the record through the held root (``test_replaced_store_record.py``), but the
steps around it still went by path: the user was told what those steps met at the path, not
what happened. Folders by path: "checkpoints.jsonl is a symbolic link ... run 'turnback
fsck'" (the held folder's own "was replaced" refusal read as a link); by descriptor: "no
session 'workspace'; start one with 'turnback session start'" (the session event). And the
record's lock file was made in what was put there: in the folder a link put at the store's
path names (``~``), a file the user never asked for. Since trust32 the lock and the event go
through the held root as the record does: by descriptor the checkpoint lands whole in the
store that was looked at, and only folders reached by path (which refuse the swap) name it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Conflict
from turnback.fs.osflags import DESCRIPTORS
from turnback.objects.objectstore import ObjectStore

from .swap_setup import one_checkpoint_then_an_edit, put_back, replaced_after


def _swapped_checkpoint(tmp_path: Path, put: str
                        ) -> tuple[Path, Path, Path, BaseException | None]:
    """A second checkpoint whose store is replaced by ``put`` inside ``ObjectStore.commit``
    (after the look, before the record): the store's path, where it went, the folder a
    link names, and what the checkpoint raised (None: it was made)."""
    with one_checkpoint_then_an_edit(tmp_path, "two\n") as (store, at):
        root, moved, elsewhere = at.store_dir, at.moved, at.elsewhere
        raised: BaseException | None = None
        with replaced_after(ObjectStore, "commit", root, moved, put, elsewhere):
            try:
                store.checkpoint(label="second")
            except Conflict as exc:
                raised = exc
    return root, moved, elsewhere, raised


@pytest.mark.parametrize("put", ["a link", "an empty folder"])
def test_a_store_replaced_while_its_record_is_written_is_named_replaced(
        tmp_path: Path, put: str) -> None:
    root, moved, _, exc = _swapped_checkpoint(tmp_path, put)
    if DESCRIPTORS:  # record, lock and event through the held root (trust32): made whole
        assert exc is None
    else:  # folders by path refuse the swap: named as what happened
        text = str(exc)
        assert f"the store {root} was replaced" in text
        assert "symbolic link" not in text and "session start" not in text
        # where the record went is said: the store that was looked at, or its log
        assert "put back" in text and "Run the command again" in text
    put_back(root, moved)
    with Store.open(tmp_path / "ws", store_dir=root) as store:  # nothing lost
        assert [c.label for c in store.checkpoints()] == ["first", "second"]
        assert store.fsck().ok


@pytest.mark.parametrize("put", ["a link", "an empty folder"])
def test_nothing_is_made_where_the_replaced_store_path_leads(tmp_path: Path, put: str) -> None:
    root, _, elsewhere, _ = _swapped_checkpoint(tmp_path, put)
    assert sorted(os.listdir(elsewhere)) == []  # the link's target: the user's folder
    assert sorted(os.listdir(root)) == []  # the empty folder put there (or the link's)
