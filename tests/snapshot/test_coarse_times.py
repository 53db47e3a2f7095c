"""File times of whole seconds (ext3, ext4 with 128-byte inodes, HFS+; FAT keeps 2 s): an
edit in the same second as the checkpoint before it keeps every field of the stat cache's
row (size, mtime, ctime, inode, mode), so the row must not be trusted then. This machine's
filesystem keeps nanoseconds (its ctime moves on any edit): the tests give a file a
whole-second mtime inside the second before the scan, as such a filesystem shows it, and
check that the next scan reads it again rather than trust it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from turnback import Store
from wsutil import age_tree, write

SECOND = 1_000_000_000


def _whole_second_just_before(p: Path) -> None:
    """``p``'s mtime put on the last whole second at least 0.1 s ago (at most 1.1 s ago):
    past the 50 ms margin that covers a nanosecond filesystem's clock tick."""
    now = time.time_ns()
    whole = now // SECOND * SECOND
    if now - whole < SECOND // 10:
        whole -= SECOND
    os.utime(p, ns=(whole, whole))


def test_a_file_with_a_whole_second_mtime_in_the_last_seconds_is_read_again(ws: Path) -> None:
    """Failed before: its row was trusted (the 50 ms margin alone), so on a filesystem of
    whole seconds an edit of the same size in that second was in no checkpoint, and the
    folder's record then kept it out of every later one."""
    write(ws, "a/f.txt", "aaaa")
    write(ws, "a/g.txt", "gggg")
    age_tree(ws)
    _whole_second_just_before(ws / "a" / "f.txt")
    with Store.open(ws) as s:
        s.checkpoint()
        again = s.scanner.scan()
    assert again.read == 1, "f.txt read again, g.txt (aged 10 s) taken from its row"


def test_an_old_whole_second_mtime_is_trusted(ws: Path) -> None:
    """A whole-second mtime seconds old (a tar's, ``touch -d``'s) costs nothing more."""
    write(ws, "a/f.txt", "aaaa")
    age_tree(ws)
    p = ws / "a" / "f.txt"
    old = (time.time_ns() // SECOND - 5) * SECOND
    os.utime(p, ns=(old, old))
    with Store.open(ws) as s:
        s.checkpoint()
        assert s.scanner.scan().read == 0
