"""The set-up of the swapped-link tests (``test_swapped_links.py``,
``test_swapped_store_links.py``): a workspace of four aged files, and the folder outside
it a swapped-in link names, holding a file of the user's that no Turnback call may touch;
and a store folder replaced while a process holds it (``test_replaced_store_*.py``,
``test_checkpoint_now.py``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from wsutil import age_tree, write


def aged_workspace(tmp_path: Path) -> Path:
    """Four files in two folders, old enough that the stat cache trusts them."""
    root = tmp_path / "ws"
    for i in range(4):
        write(root, f"d{i % 2}/f{i}.txt", f"file {i}\n")
    age_tree(root)
    return root


def outside_folder(tmp_path: Path) -> Path:
    """The folder a swapped-in link names (``~/.config`` in the attack), with a file of
    its own."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "mine.sh").write_text("echo mine\n")
    return folder


def swap(folder: Path, outside: Path) -> None:
    """``folder`` replaced by a link to ``outside``; what it held copied there first, so a
    write, a removal or a gc reading through the link finds what it expects."""
    if folder.exists():
        shutil.copytree(folder, outside, dirs_exist_ok=True)
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, folder)


def replace_store(root: Path, moved: Path, put: str, elsewhere: Path) -> None:
    """The store at ``root`` moved to ``moved`` and ``put`` in its place: "a link" (to
    ``elsewhere``), "an empty folder", "a copy" (of the store), or anything else: nothing."""
    os.rename(root, moved)
    if put == "a link":
        os.symlink(elsewhere, root)
    elif put == "an empty folder":
        root.mkdir()
    elif put == "a copy":
        shutil.copytree(moved, root, symlinks=True)


@contextmanager
def replaced_after(owner: type, method: str, root: Path, moved: Path, put: str,
                   elsewhere: Path) -> Iterator[None]:
    """``owner.method`` patched to ``replace_store`` (``root`` moved to ``moved``, ``put`` in
    its place) right after it returns: a swap at one step of a checkpoint (after
    ``ObjectStore.commit``: between the root's look and the record; after
    ``CheckpointIndex.add``: between the record and the event)."""
    real = getattr(owner, method)

    def then_replaced(self: Any, *a: Any, **kw: Any) -> Any:
        out = real(self, *a, **kw)
        replace_store(root, moved, put, elsewhere)
        return out

    with mock.patch.object(owner, method, then_replaced):
        yield
