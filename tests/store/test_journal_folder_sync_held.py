"""The folder sync that makes a store's first ``journal.json`` durable (once a store: the
file stays, emptied, between rewinds) goes through the held root, as the journal's own
sync does (``trust36``): it opened the store's root again by path, so a ``--store``
store replaced meanwhile had the copy's folder synced (trust36, left open)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.fs.osflags import DESCRIPTORS
from turnback.rewind import oplog


def test_a_first_journals_folder_is_synced_through_the_held_root(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        store.config.fsync = "commit"
        first = store.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
        root = ws / ".turnback"
        assert not (root / "journal.json").exists()
        synced: list[tuple[list[Path], list[tuple[int, int]]]] = []
        real = oplog.fsync_all

        def spy(files: Any, dirs: Any = (), meanwhile: Any = None, fds: Any = (),
                **kw: Any) -> None:
            held = [os.fstat(fd) for fd in kw.get("dir_fds", ())]
            synced.append(([Path(d) for d in dirs], [(st.st_dev, st.st_ino) for st in held]))
            real(files, dirs, meanwhile=meanwhile, fds=fds, **kw)

        monkeypatch.setattr(oplog, "fsync_all", spy)
        store.rewind(first.id)
    assert (ws / "a.txt").read_text() == "one"
    st = os.stat(root)
    [(dirs, held)] = synced
    if not DESCRIPTORS:  # folders by path (Windows, TURNBACK_FS_PATHS=1): none held
        assert root in dirs and held == []
        return
    assert root not in dirs  # before: the root's path opened again and synced
    assert (st.st_dev, st.st_ino) in held
