"""A rewind's writes open each folder on their way once (branch `rewind34`,
``rewind/writefolders.py``): each path's folder was walked from the workspace's root, so
``d`` was opened three times and ``d/e`` twice for these four files (one ``openat`` and
one ``close`` each). The files written are the targets, every descriptor is closed after,
and a link swapped in for a folder is still refused (``test_rewind.py``'s symlink tests
run the same walk)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.folders import FdFolder
from turnback.fs.osflags import DESCRIPTORS
from wsutil import write

from .test_release_any_exception import _open_fds

PATHS = ("d/e/a.txt", "d/e/b.txt", "d/f/c.txt", "g.txt")


def test_each_folder_on_the_writes_way_is_opened_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not DESCRIPTORS:
        pytest.skip("folders reached by path: every path walked from the root, as before")
    ws = tmp_path / "ws"
    for p in PATHS:
        write(ws, p, "v1\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        for p in PATHS:
            write(ws, p, "v2\n")
        opened: Counter[str] = Counter()
        real = FdFolder.child

        def counted(self: FdFolder, name: str) -> FdFolder:
            child = real(self, name)
            rel = os.path.relpath(child.path, ws)
            if not rel.startswith((".turnback", "..")):  # the store's folders apart
                opened[rel] += 1
            return child

        before = _open_fds() if os.path.isdir("/proc/self/fd") else None
        monkeypatch.setattr(FdFolder, "child", counted)
        res = store.rewind(cp.id, finish_later=True)
        monkeypatch.undo()
        after = _open_fds() if before is not None else None
        store.finish_rewind()
    assert sorted(res.written) == sorted(PATHS)
    for p in PATHS:
        assert (ws / p).read_text() == "v1\n"
    # the rewind's own opens of the workspace's folders (the safety scan reads files by
    # path here): each once; before, ``d`` 3 and ``d/e`` 2
    assert opened == Counter({"d": 1, "d/e": 1, "d/f": 1}), opened
    if before is not None and after is not None:
        # the folders held for ``release`` (one a folder a second name was made in: the
        # root, d/e, d/f) are the only descriptors the answer leaves open
        assert after - before <= 3, (before, after)
