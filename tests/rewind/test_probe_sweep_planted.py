"""What ``probeplace.sweep`` (each ``Store.open``) does with files planted in the store's
root under probe names (redteam44's pass over trust33).

Anyone who can write the store's root can put there names of a probe's shape that are not a
dead probe's empty file: a symlink, a FIFO, a folder, a non-empty file, a second name of a
user's file, a live process's name. None is removed, moved, followed or opened. Such a name
is never removed, so it was looked at by every open: 10,000 of them cost each open 0.59 s
(bench/RESULTS.md, redteam44). An open now looks at ``SWEEP_MAX`` of them at most.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.fs import probeplace, rewindnames
from wsutil import dead_pid

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="no probe is made, nor swept, where folders are by path")


def test_an_open_looks_at_a_bounded_few_of_thousands_of_planted_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = dead_pid()
    for i in range(400):  # non-empty: never a dead probe's file, so never removed
        (tmp_path / rewindnames.probe(dead, f"{i:04x}")).write_bytes(b"x")
    looked: list[str] = []
    real = probeplace._left_probe

    def left_probe(name: str, st: os.stat_result) -> bool:
        looked.append(name)
        return real(name, st)

    monkeypatch.setattr(probeplace, "_left_probe", left_probe)
    assert probeplace.sweep(tmp_path) == []
    assert 0 < len(looked) <= probeplace.SWEEP_MAX, len(looked)
    assert len(os.listdir(tmp_path)) == 400


def test_planted_things_of_a_probe_name_are_left_as_they_are(tmp_path: Path) -> None:
    dead = dead_pid()
    names = [rewindnames.probe(dead, f"{i:04x}") for i in range(6)]
    users = tmp_path / "users-file"
    users.write_bytes(b"")  # a user's empty file elsewhere: its target
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "kept").write_bytes(b"")
    root = tmp_path / "root"
    root.mkdir()
    (root / names[0]).symlink_to(users)  # a link to an empty file of the user's
    os.mkfifo(root / names[1])  # a FIFO: a sweep that opened it would block
    (root / names[2]).mkdir()  # a folder
    (root / names[2] / "inside").write_bytes(b"data")
    (root / names[3]).write_bytes(b"x")  # not empty
    (root / names[4]).symlink_to(outside)  # a link to a folder
    os.link(users, root / names[5])  # a second name of the user's empty file
    try:
        removed = probeplace.sweep(root)
        # only the second name of an empty regular file is a dead probe's shape; its
        # removal takes that name, never the user's own
        assert removed == [names[5]]
        assert users.exists() and (outside / "kept").exists()
        assert sorted(os.listdir(root)) == sorted(names[:5])
        assert (root / names[2] / "inside").read_bytes() == b"data"
        assert (root / names[0]).is_symlink() and (root / names[4]).is_symlink()
    finally:
        (outside / "kept").unlink()
        outside.rmdir()
