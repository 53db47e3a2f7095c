"""``share/`` (the store's sharing repository) swapped for a link after the store was
opened, while a server holds the store: git would write the workspace's contents (its
objects, refs and config) in the folder the link names, since git is run on the path.
The push is refused naming the link, and that folder is as it was."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Unsafe
from turnback.sharing import operations
from turnback.sharing.repo import ShareRepo
from wsutil import write

from .conftest import git


def _listing(folder: Path) -> dict[str, int]:
    return {os.path.relpath(os.path.join(d, n), folder): os.lstat(os.path.join(d, n)).st_size
            for d, dirs, files in os.walk(folder) for n in dirs + files}


@pytest.mark.parametrize("swapped", ["share", "share/git", "fresh share/git"])
def test_a_link_put_in_place_of_the_sharing_repository_is_refused(tmp_path: Path,
                                                                  swapped: str) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "secret contents\n")
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", str(remote))
    with Store.open(ws) as store:
        store.checkpoint()
        outside = tmp_path / "outside"
        if swapped.startswith("fresh"):  # before the first push: git init would follow it
            (store.root / "share").mkdir()
            (store.root / "share" / "git").symlink_to(outside)
        else:
            ShareRepo(store.root).ensure()  # the repository made, as a first push makes it
            # the attacker moves it out and links to the moved copy (one git accepts)
            shutil.move(store.root / swapped, outside)
            (store.root / swapped).symlink_to(outside)
        before = _listing(outside)
        with pytest.raises(Unsafe, match="share"):
            operations.push(store, f"file://{remote}")
        assert _listing(outside) == before
        assert outside.exists() != swapped.startswith("fresh")  # git init made nothing there
