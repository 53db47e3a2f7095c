"""``FileLock(folder=)`` (``trust32``): the lock file opened by its name in a held folder.

Where folders are reached by path (``PathFolder``: ``TURNBACK_FS_PATHS=1``, Windows), an
open in a folder whose path now leads elsewhere is refused with the same ELOOP as a link
at the name, and the lock's open said ``LinkedInStore``: "checkpoints.jsonl.lock is a
link ... Remove it" — blaming a lock file that is no link and telling the user to remove
it from whatever is at the path now. The folder is looked at: replaced, it is
``Conflict`` naming the folder; a link at the name is still ``LinkedInStore``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.errors import Conflict, LinkedInStore
from turnback.fs.folders import PathFolder, identity
from turnback.fs.locks import FileLock


def test_a_replaced_folder_is_said_to_be_and_the_lock_not_blamed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    held = PathFolder(str(store), identity(os.stat(store)))
    os.rename(store, tmp_path / "moved")
    store.mkdir()  # another folder at the path
    with pytest.raises(Conflict, match="was replaced") as caught:
        FileLock(str(store / "checkpoints.jsonl.lock"), 1.0, held).acquire()
    assert str(store) in str(caught.value)
    assert os.listdir(store) == [] and os.listdir(tmp_path / "moved") == []


def test_a_link_at_the_lock_is_still_refused_naming_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    target = tmp_path / "elsewhere"
    os.symlink(target, store / "checkpoints.jsonl.lock")
    held = PathFolder(str(store), identity(os.stat(store)))
    with pytest.raises(LinkedInStore, match=r"checkpoints\.jsonl\.lock is a link"):
        FileLock(str(store / "checkpoints.jsonl.lock"), 1.0, held).acquire()
    assert not target.exists()
