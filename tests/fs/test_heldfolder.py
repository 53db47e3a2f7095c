"""``fs/heldfolder.py``: a folder held open tells whether its path still leads to it, and
holds no descriptor once dropped."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from turnback.fs.heldfolder import HeldFolder

pytestmark = pytest.mark.skipif(not hasattr(os, "O_DIRECTORY"), reason="no folder descriptors")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_folder_made_again_at_its_path_is_another(tmp_path: Path) -> None:
    d = tmp_path / "store"
    d.mkdir()
    held = HeldFolder(d)
    assert not held.replaced()
    os.rename(d, tmp_path / "old")
    assert held.replaced()  # nothing at the path
    d.mkdir()  # the held folder's inode is still in use: this one has another
    assert held.replaced()
    held.close()
    held.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc")
def test_one_dropped_unclosed_keeps_no_descriptor(tmp_path: Path) -> None:
    # earlier tests' garbage (a store left in a reference cycle past an injected crash, in
    # tests/reliability) is collected first: its descriptors must not close inside the count
    gc.collect()
    before = open_fds()
    held = [HeldFolder(tmp_path) for _ in range(50)]
    assert open_fds() == before + 50
    del held
    gc.collect()
    assert open_fds() == before
