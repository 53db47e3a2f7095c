"""The folders of an open store held open (fs/storeroots.py, fs/instore.py): lent to each
write while their path leads to them, never closed under a borrower, all closed with the
store."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import instore, storeroots
from turnback.fs.folders import DESCRIPTORS, open_root


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


@pytest.mark.skipif(not DESCRIPTORS, reason="a path folder holds no descriptor")
def test_a_dropped_folder_stays_open_until_its_borrower_gives_it_back(tmp_path: Path) -> None:
    kept = storeroots.Kept(open_root(str(tmp_path)), (0, 0), str(tmp_path))
    lent = kept.lend()
    assert lent is not None
    fd = lent.fd  # type: ignore[attr-defined]
    kept.drop()
    os.fstat(fd)  # still open: a borrower never finds it closed
    assert kept.lend() is None  # dropped: nothing more lent
    lent.close()
    with pytest.raises(OSError) as err:
        os.fstat(fd)
    assert err.value.errno == errno.EBADF
    kept.drop()  # a second drop closes nothing (the number may be another file's now)


def test_a_stores_held_folders_are_closed_with_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    before = _open_fds()
    store = Store.open(ws)
    store.checkpoint()
    store.start_session(title="t", session_id="s1")
    assert storeroots.held(str(store.root), ("sessions",)) is not None
    store.close()
    assert storeroots.held(str(store.root), ("sessions",)) is None
    assert storeroots.find(store.root / "sessions" / "s1.jsonl") is None
    assert _open_fds() <= before


def test_a_held_folder_replaced_by_another_is_not_lent(tmp_path: Path) -> None:
    """``sessions/`` moved away and a new folder made in its place: the write goes to the
    new one (the path's), not to the held one wherever it went."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as store:
        store.start_session(title="t", session_id="s1")
        sessions = store.root / "sessions"
        sessions.rename(tmp_path / "moved")
        sessions.mkdir(mode=0o700)
        store.start_session(title="u", session_id="s2")
        assert (sessions / "s2.jsonl").exists()
        assert not (tmp_path / "moved" / "s2.jsonl").exists()


def test_a_path_of_no_open_store_is_written_by_path(tmp_path: Path) -> None:
    assert instore.folder_of(tmp_path / "x" / "y", create=False) is None
    fd = instore.open_file(tmp_path / "made" / "f", os.O_WRONLY | os.O_CREAT, 0o600,
                           make_dirs=True)
    os.close(fd)
    assert (tmp_path / "made" / "f").exists()
    instore.unlink(tmp_path / "made" / "f")
    assert not (tmp_path / "made" / "f").exists()
