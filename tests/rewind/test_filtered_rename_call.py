"""A rewind where the rename call that takes flags is refused as a whole with ``EPERM``:
a seccomp filter that answers so for a system call it does not allow (systemd-nspawn's, a
container runtime's older default; cap-std treats ``openat2``'s ``EPERM`` the same way).
trust28's create and swap27's swap took that ``EPERM`` for the rename's own answer and
raised it: every rewind that created or replaced a file failed with "Operation not
permitted", where a plain rename would have worked (branch `redteam36`)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import exchange
from wsutil import journal_left, write

BY_PATH = os.environ.get("TURNBACK_FS_PATHS") == "1"


def test_a_rewind_goes_through_where_the_call_is_filtered(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call answers ``EPERM``, whatever its names or flag (as a filter does): the
    rewind creates n.txt and writes a.txt by the plain renames of a system without the
    call, and asks the call no more once it knows (two calls: the refused one and the
    look that tells a filter from a refused rename). Fails before the fix
    (``PermissionError`` out of the rewind)."""
    if BY_PATH:
        pytest.skip("folders by path make no flagged rename: nothing to refuse")
    calls: list[int] = []

    def filtered(dir_fd: int, a: bytes, b: bytes, flag: int) -> int:
        calls.append(flag)
        return errno.EPERM

    write(ws, "a.txt", "a1\n")
    write(ws, "n.txt", "n1\n")
    with Store.open(ws) as store:
        cp = store.checkpoint().id
        write(ws, "a.txt", "a2\n")
        (ws / "n.txt").unlink()
        monkeypatch.setattr(exchange, "_loaded", [filtered])
        store.rewind(cp)
        store.finish_rewind()
        assert (ws / "a.txt").read_text() == "a1\n" and (ws / "n.txt").read_text() == "n1\n"
        assert not journal_left(store.root)
        assert len(calls) <= 2 and exchange._loaded == [None]
