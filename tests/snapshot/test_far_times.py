"""A file's times are its owner's to set, to any value the file system holds: one past
2262 (beyond 64 bits of nanoseconds) once made every checkpoint fail with ``struct.error``
from the stat cache's row. Such a file is now read at every scan (no row, no folder
record) and never stops a checkpoint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.snapshot import prescan
from wsutil import age_tree, write

FAR_NS = 10_000_000_000 * 10**9  # 2286-11-20: past what a signed 64-bit count of ns holds


def _far(path: Path) -> None:
    try:
        os.utime(path, ns=(FAR_NS, FAR_NS), follow_symlinks=False)
    except (OSError, OverflowError):
        pytest.skip("this file system holds no time past 2262")
    if os.lstat(path).st_mtime_ns != FAR_NS:
        pytest.skip("this file system clamps times past 2262")


def test_a_file_dated_past_2262_is_checkpointed_and_read_at_every_scan(ws: Path) -> None:
    write(ws, "a.txt", "a")
    write(ws, "d/b.txt", "one")
    age_tree(ws)
    store = Store.open(ws)
    try:
        store.checkpoint()  # the stat cache's rows and the folders' records made
        store.close()
        store = Store.open(ws)
        write(ws, "d/b.txt", "two")
        _far(ws / "d" / "b.txt")
        # a full scan of a folder with a record, holding a file no row can hold
        cp = store.checkpoint()
        assert store.read_file(cp.id, "d/b.txt") == b"two"
        assert store.read_file(cp.id, "a.txt") == b"a"
        store.close()
        store = Store.open(ws)
        # same size, same far time: no row kept it, so its bytes are read again
        write(ws, "d/b.txt", "six")
        _far(ws / "d" / "b.txt")
        cp = store.checkpoint()
        assert store.read_file(cp.id, "d/b.txt") == b"six"
    finally:
        store.close()


def test_the_python_folder_check_gives_no_key_for_a_far_time(tmp_path: Path) -> None:
    write(tmp_path, "f", "x")
    _far(tmp_path / "f")
    with os.scandir(tmp_path) as it:
        listing = list(it)
    sts = [de.stat(follow_symlinks=False) for de in listing]
    assert prescan.listing_key(listing, sts) is None
    assert prescan.matching(listing, sts, "0" * 32) is None
