"""``fs/replacing.replace_file`` attacked: whatever sits at the name (a FIFO, a folder, a
link, a hard link to a file outside), a full disk mid-write, a read-only folder, the held
folder renamed away, any umask. The old file stays whole or the new one is there, nothing
planted is opened or written through, no temporary file is left."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from turnback.fs import replacing
from turnback.fs.folders import open_root
from turnback.fs.tempnames import TMP_PREFIX


@pytest.fixture
def here(tmp_path: Path) -> Path:
    d = tmp_path / "d"
    d.mkdir()
    return d


def _put(folder: Path, name: str, data: bytes, mode: int | None = 0o600) -> None:
    with open_root(str(folder)) as f:
        replacing.replace_file(f, name, data, mode=mode)


def _left(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(TMP_PREFIX)]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_link_or_hard_link_at_the_name_is_replaced_never_written_through(
        here: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"theirs")
    os.mkfifo(here / "fifo")  # an open for writing would wait for a reader for ever
    (here / "link").symlink_to(outside)
    os.link(outside, here / "hard")
    for name in ("fifo", "link", "hard"):
        _put(here, name, b"ours")
        assert (here / name).read_bytes() == b"ours"
        assert stat.S_ISREG((here / name).lstat().st_mode)
    assert outside.read_bytes() == b"theirs" and outside.stat().st_nlink == 1
    assert _left(here) == []


def test_a_folder_at_the_name_is_refused_and_kept(here: Path) -> None:
    (here / "cache.json").mkdir()
    (here / "cache.json" / "inside").write_bytes(b"kept")
    with pytest.raises(OSError):
        _put(here, "cache.json", b"ours")
    assert (here / "cache.json" / "inside").read_bytes() == b"kept"
    assert _left(here) == []


def test_a_full_disk_mid_write_keeps_the_old_file_and_leaves_no_temporary(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _put(here, "index.json", b"old")
    real_write = os.write
    calls = [0]

    def write(fd: int, data: bytes | memoryview) -> int:
        calls[0] += 1
        if calls[0] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, bytes(data)[:3])  # a short write first, then the disk is full

    monkeypatch.setattr(replacing.os, "write", write)
    with pytest.raises(OSError) as info:
        _put(here, "index.json", b"new content, longer")
    assert info.value.errno == errno.ENOSPC
    assert (here / "index.json").read_bytes() == b"old"
    assert _left(here) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_folder_refuses_and_keeps_the_old_file(here: Path) -> None:
    _put(here, "index.json", b"old")
    here.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            _put(here, "index.json", b"new")
    finally:
        here.chmod(0o700)
    assert (here / "index.json").read_bytes() == b"old"
    assert _left(here) == []


@pytest.mark.parametrize("umask", [0o000, 0o777])
def test_the_mode_asked_is_exact_whatever_the_umask(here: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        _put(here, "a.json", b"x", mode=0o600)
        _put(here, "b.json", b"x", mode=0o644)
        _put(here, "c.json", b"x", mode=None)  # an editor's new file: the umask's
    finally:
        os.umask(old)
    assert stat.S_IMODE((here / "a.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((here / "b.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((here / "c.json").stat().st_mode) == 0o666 & ~umask
    assert (here / "c.json").stat().st_size == 1, "written whatever mode it was made with"


@pytest.mark.skipif(os.name != "posix" or os.environ.get("TURNBACK_FS_PATHS") == "1",
                    reason="a held descriptor follows its folder (POSIX descriptors only)")
def test_the_held_folder_renamed_away_mid_write_gets_the_file(
        here: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    moved = tmp_path / "moved"
    real_write = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        if not moved.exists():
            here.rename(moved)  # a sync tool or the user moves the folder meanwhile
        return real_write(fd, data)

    monkeypatch.setattr(replacing.os, "write", write)
    _put(here, "index.json", b"new")
    assert (moved / "index.json").read_bytes() == b"new"
    assert not here.exists() and _left(moved) == []


def test_write_over_keeping_the_descriptor_hands_it_back_open_or_closes_it_on_failure(
        here: Path) -> None:
    """``atomic.py``'s ``keep_open``: the descriptor reads the file written; when the rename
    fails (a folder at the name) it is closed and the temporary file removed."""
    (here / "taken").mkdir()
    opened: list[int] = []

    def write(fd: int) -> None:
        opened.append(fd)
        os.write(fd, b"ours")

    with open_root(str(here)) as f:
        with pytest.raises(OSError):
            replacing.write_over(f, "taken", os.O_RDWR, 0o600, write, keep_open=True)
        with pytest.raises(OSError):
            os.fstat(opened[0])  # closed (before any other open can take its number)
        assert _left(here) == []
        fd = replacing.write_over(f, "cache.bin", os.O_RDWR, 0o600, write, keep_open=True)
    assert fd is not None
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        assert os.read(fd, 16) == b"ours"
    finally:
        os.close(fd)
    assert (here / "cache.bin").read_bytes() == b"ours" and _left(here) == []
