"""The set-up of the swapped-link tests (``test_swapped_links.py``,
``test_swapped_store_links.py``): a workspace of four aged files, and the folder outside
it a swapped-in link names, holding a file of the user's that no Turnback call may touch;
and a store folder replaced while a process holds it (``test_replaced_store_*.py``,
``test_checkpoint_now.py``): the start those tests share, the swap at a step of a
checkpoint, and the store put back in its place after."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from turnback import Store
from turnback.snapshot.scan import Scanner
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


@contextmanager
def replaced_at_scan(root: Path, moved: Path, put: str, elsewhere: Path) -> Iterator[None]:
    """``replace_store`` (``root`` moved to ``moved``, ``put`` in its place) as a
    checkpoint's scan begins: after the store was opened and looked at, before anything of
    the checkpoint is written."""
    real = Scanner.scan

    def scan(self: Scanner, *a: Any, **kw: Any) -> Any:
        replace_store(root, moved, put, elsewhere)
        return real(self, *a, **kw)

    with mock.patch.object(Scanner, "scan", scan):
        yield


def three_files_and_a_folder(tmp_path: Path) -> tuple[Path, Path]:
    """``tmp_path/ws`` holding f0.txt, f1.txt, f2.txt and sub/g.txt, and
    ``tmp_path/elsewhere``, an empty folder of the user's that a link put in the store's
    place names."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "g.txt").write_text("g\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return ws, elsewhere


def files_below(root: Path) -> list[str]:
    """Every file and folder below ``root``; none when ``root`` is a link or no folder (what
    was put in a store's place is looked at, never followed)."""
    if root.is_symlink() or not root.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def put_back(root: Path, moved: Path) -> None:
    """The store moved to ``moved`` put back at ``root``, whatever was put there removed."""
    if root.is_symlink():
        root.unlink()
    elif root.exists():
        shutil.rmtree(root)
    os.rename(moved, root)


@dataclass(frozen=True)
class OneFile:
    """The paths of ``one_checkpoint_then_an_edit``."""

    ws: Path  # one file, f.txt
    store_dir: Path  # the store's folder (``--store``), outside the workspace
    elsewhere: Path  # an empty folder of the user's (~/.config in the attack) a link names
    moved: Path  # where the store goes when it is replaced


@contextmanager
def one_checkpoint_then_an_edit(tmp_path: Path, edit: str = "two, in no object yet\n"
                                ) -> Iterator[tuple[Store, OneFile]]:
    """A ``--store`` store open on a workspace of one file, f.txt, with one checkpoint
    ("first") and f.txt changed since to ``edit``: the next checkpoint has one new object."""
    at = OneFile(ws=tmp_path / "ws", store_dir=tmp_path / "named-store",
                 elsewhere=tmp_path / "elsewhere", moved=tmp_path / "moved")
    at.ws.mkdir()
    (at.ws / "f.txt").write_text("one\n")
    at.elsewhere.mkdir()
    with Store.open(at.ws, store_dir=at.store_dir) as store:
        store.checkpoint(label="first")
        (at.ws / "f.txt").write_text(edit)
        yield store, at
