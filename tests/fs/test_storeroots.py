"""The folders of an open store held open (fs/storeroots.py, fs/instore.py): lent to each
write while their path leads to them, never closed under a borrower, all closed with the
store."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Unsafe
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


def test_a_link_swapped_in_above_a_held_folder_whose_inode_number_was_reused(
        tmp_path: Path) -> None:
    """``index/`` removed (``index/acc`` with it), a folder ``acc`` made outside, and
    ``index`` made a link there. The file system gives a new folder the removed one's
    inode number within a few tries (ext4 does), so a look at ``index/acc``'s path, which follows
    the link at ``index``, matched the held folder's identity: with no descriptor held
    (``PathFolder``: Windows, ``TURNBACK_FS_PATHS=1``) the next write by that path went
    into the folder outside. With a descriptor the number is not free: opened again,
    refused."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    with Store.open(ws) as store:
        acc = store.root / "index" / "acc"
        os.close(instore.open_file(acc / "s1.json", os.O_WRONLY | os.O_CREAT, 0o600,
                                   make_dirs=True))
        assert storeroots.held(str(store.root), ("index", "acc")) is not None
        was = os.stat(acc).st_ino
        for name in os.listdir(acc):
            os.unlink(acc / name)
        os.rmdir(acc)
        reused = False
        for i in range(200):  # the attacker makes folders until one has that number
            (outside / f"try{i}").mkdir()
            if os.stat(outside / f"try{i}").st_ino == was:
                os.rename(outside / f"try{i}", outside / "acc")
                reused = True
                break
        else:
            (outside / "acc").mkdir()
        os.rename(store.root / "index", tmp_path / "index-aside")
        os.symlink(outside, store.root / "index")
        with pytest.raises(Unsafe, match="'index' is a symlink"):
            os.close(instore.open_file(acc / "s2.json", os.O_WRONLY | os.O_CREAT, 0o600))
        assert os.listdir(outside / "acc") == []  # nothing written outside
        if not reused and not DESCRIPTORS:  # with a descriptor held it never is
            pytest.skip("the file system gave the new folder another inode number: the "
                        "look at the path could not match (checked above all the same)")
