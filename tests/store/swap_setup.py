"""The set-up of the swapped-link tests (``test_swapped_links.py``,
``test_swapped_store_links.py``): a workspace of four aged files, and the folder outside
it a swapped-in link names, holding a file of the user's that no Turnback call may touch."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
