"""fs/atomic.py: fsync_all, atomic_write with files synced beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.fs.atomic import atomic_write, fsync_all
from turnback.fs.osflags import O_NOFOLLOW


def test_fsync_all_syncs_files_and_folders_and_raises_a_files_failure(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"b")
    fsync_all([tmp_path / "a", tmp_path / "b"], [tmp_path])  # no error: all synced
    with pytest.raises(FileNotFoundError):
        fsync_all([tmp_path / "a", tmp_path / "missing"], [tmp_path])
    fsync_all([], [tmp_path / "no-such-folder"])  # a folder's failure is ignored


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fsync_all_refuses_a_link_or_fifo_swapped_in_without_waiting(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"x")
    os.symlink(tmp_path / "real", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    if O_NOFOLLOW:  # with folders reached by path (Windows) there is no such flag
        with pytest.raises(OSError):
            fsync_all([tmp_path / "link"])
    with pytest.raises(OSError):  # opened without blocking, then fsync refuses it
        fsync_all([tmp_path / "fifo"])


def test_atomic_write_sync_with_makes_the_file_appear_only_once_both_are_synced(
        tmp_path: Path) -> None:
    (tmp_path / "record").write_bytes(b"named by the journal\n")
    atomic_write(tmp_path / "journal", b"{}", sync_with=[tmp_path / "record"])
    assert (tmp_path / "journal").read_bytes() == b"{}"
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "journal2", b"{}", sync_with=[tmp_path / "missing"])
    assert not (tmp_path / "journal2").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal", "record"], "no temp left"
