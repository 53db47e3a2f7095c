"""fs/atomic.py: fsync_all."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback.fs.atomic import fsync_all


def test_fsync_all_syncs_files_and_folders_and_raises_a_files_failure(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"b")
    fsync_all([tmp_path / "a", tmp_path / "b"], [tmp_path])  # no error: all synced
    with pytest.raises(FileNotFoundError):
        fsync_all([tmp_path / "a", tmp_path / "missing"], [tmp_path])
    fsync_all([], [tmp_path / "no-such-folder"])  # a folder's failure is ignored
