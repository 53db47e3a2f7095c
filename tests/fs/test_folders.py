"""fs/folders.py: both implementations of a folder keep the same promises here, on Linux.

``PathFolder`` is what Windows' CPython runs (no ``dir_fd``, no ``O_NOFOLLOW``); it is
built directly here whatever ``TURNBACK_FS_PATHS`` says, so each refusal it makes is
checked in every run. The races it closes are staged by swapping the file system at the
exact call the check guards (monkeypatched ``os`` functions), not by timing.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import turnback
from turnback.errors import Unsafe
from turnback.fs import atomic, folders
from turnback.fs.folders import (
    FdFolder,
    Folder,
    NotAFolder,
    PathFolder,
    chmod_fd,
    enter_path,
    is_link,
    open_dir,
    open_path_nofollow,
)


def _fd_root(path: Path) -> FdFolder:
    return FdFolder(os.open(path, os.O_RDONLY | os.O_DIRECTORY), str(path))


def _path_root(path: Path) -> PathFolder:
    return enter_path(str(path))


ROOTS = {"descriptors": _fd_root, "paths": _path_root}


@pytest.fixture(params=sorted(ROOTS))
def root_of(request: pytest.FixtureRequest) -> Any:
    return ROOTS[request.param]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.txt").write_bytes(b"a\n")
    (ws / "file").write_bytes(b"f\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret\n")
    os.symlink(outside, ws / "link")
    os.symlink(outside / "secret", ws / "src" / "to-secret")
    return ws


def test_open_dir_and_files_never_through_a_link(tree: Path, root_of: Any) -> None:
    with root_of(tree) as root:
        with open_dir(root, ["src"], create=False) as src:
            fd = src.open("a.txt", os.O_RDONLY)
            try:
                assert os.read(fd, 10) == b"a\n"
            finally:
                os.close(fd)
            with pytest.raises(OSError) as got:
                src.open("to-secret", os.O_RDONLY)
            assert got.value.errno == errno.ELOOP
            assert is_link(src.lstat("to-secret"))
            assert src.readlink("to-secret").endswith("secret")
            names = sorted(src.listdir())
            assert names == ["a.txt", "to-secret"]
            assert sorted(de.name for de in src.scandir()) == names
        with pytest.raises(Unsafe, match="symlink"):
            open_dir(root, ["link"], create=False)
        with pytest.raises(Unsafe, match="symlink"):
            open_dir(root, ["link", "deeper"], create=True)
        with pytest.raises(NotAFolder):
            open_dir(root, ["file", "x"], create=True)
        with pytest.raises(FileNotFoundError):
            open_dir(root, ["missing"], create=False)
        with open_dir(root, ["new", "deep"], create=True) as made:
            fd = made.open("n.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            made.rename("n.txt", "m.txt")
            made.unlink("m.txt")
        with pytest.raises(Unsafe):
            open_dir(root, [".."], create=False)
    assert (tree / "new" / "deep").is_dir()
    assert sorted(p.name for p in (tree.parent / "outside").iterdir()) == ["secret"]


def test_create_exclusive_refuses_any_existing_name(tree: Path, root_of: Any) -> None:
    """O_EXCL over a dangling or live link: exists, never written through."""
    with (root_of(tree) as root, open_dir(root, ["src"], create=False) as src,
          pytest.raises(FileExistsError)):
        src.open("to-secret", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    assert (tree.parent / "outside" / "secret").read_bytes() == b"secret\n"


def test_a_file_swapped_for_another_between_look_and_open_is_refused(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without O_NOFOLLOW the check is lstat, open, fstat: a name swapped (here for a
    hard link to a file outside; on Windows a symlink or junction in the same window)
    right after the lstat is caught by the identities that differ."""
    target = tree / "src" / "a.txt"
    real_open = os.open

    def swapping_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if os.fspath(path) == str(target):
            os.unlink(target)
            os.link(tree.parent / "outside" / "secret", target)
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", swapping_open)
    with pytest.raises(OSError) as got:
        open_path_nofollow(str(target), os.O_RDONLY)
    assert got.value.errno == errno.ELOOP
    assert "replaced" in str(got.value)


def test_a_link_put_where_a_file_is_created_is_refused(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """O_CREAT without O_EXCL on a new name: a link put there in the window is caught
    after the open (the lstat then names a link, not the file the descriptor holds)."""
    target = tree / "src" / "new.txt"
    real_open = os.open

    def racing_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        fd = real_open(path, flags, mode, **kw)
        if os.fspath(path) == str(target):
            os.rename(target, tree / "src" / "moved")
            os.symlink(tree.parent / "outside" / "secret", target)
        return fd

    monkeypatch.setattr(os, "open", racing_open)
    with pytest.raises(OSError) as got:
        open_path_nofollow(str(target), os.O_WRONLY | os.O_CREAT, 0o600)
    assert got.value.errno == errno.ELOOP


def test_a_path_folder_swapped_for_a_link_refuses_every_change(tree: Path) -> None:
    """The identity taken when the folder was entered is checked before each change and
    after each open or listing: a folder renamed away and replaced by a link to outside
    gets no write, and shows nothing of outside."""
    with _path_root(tree) as root:
        src = open_dir(root, ["src"], create=False)
        assert isinstance(src, PathFolder)
        os.rename(tree / "src", tree / "src-away")
        os.symlink(tree.parent / "outside", tree / "src")
        calls = [
            lambda: src.unlink("secret"),
            lambda: src.mkdir("d", 0o755),
            lambda: src.rename("secret", "x"),
            lambda: src.symlink("t", "l"),
            lambda: src.rmdir("secret"),
            lambda: src.open("n", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600),
            lambda: src.open("secret", os.O_RDONLY),  # a read too: no outside file shown
            lambda: src.chmod_self(0o700),
            lambda: src.listdir(),
            lambda: src.scandir(),
        ]
        for call in calls:
            with pytest.raises(OSError) as got:
                call()
            assert got.value.errno == errno.ELOOP
    assert sorted(p.name for p in (tree.parent / "outside").iterdir()) == ["secret"]


def test_a_path_folder_replaced_by_another_folder_is_refused(tree: Path) -> None:
    with _path_root(tree) as root:
        src = open_dir(root, ["src"], create=False)
        os.rename(tree / "src", tree / "src-away")
        (tree / "src").mkdir()
        with pytest.raises(OSError) as got:
            src.unlink("a.txt")
        assert got.value.errno == errno.ELOOP
    assert (tree / "src-away" / "a.txt").exists()


def _st(mode: int, attrs: int = 0, tag: int | None = None) -> Any:
    fields: dict[str, Any] = {"st_mode": mode, "st_file_attributes": attrs}
    if tag is not None:
        fields["st_reparse_tag"] = tag
    return SimpleNamespace(**fields)


def test_which_reparse_points_count_as_links() -> None:
    """As Windows' os.lstat reports them: a junction is a folder with the reparse
    attribute (tag IO_REPARSE_TAG_MOUNT_POINT, a name surrogate); OneDrive's placeholder
    a file with it (IO_REPARSE_TAG_CLOUD_6, not one)."""
    reparse = 0x400
    assert is_link(_st(stat.S_IFLNK | 0o777))
    assert is_link(_st(stat.S_IFDIR | 0o777, reparse, 0xA0000003))  # junction
    assert is_link(_st(stat.S_IFDIR | 0o777, reparse, None))  # tag unknown: refused
    assert not is_link(_st(stat.S_IFREG | 0o666, reparse, 0x9000601A))  # cloud file
    assert not is_link(_st(stat.S_IFDIR | 0o777))


def test_mode_change_by_name_where_fchmod_is_missing(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' os has no fchmod before 3.13: the name is changed, if it still holds the
    file the descriptor holds."""
    monkeypatch.delattr(os, "fchmod")
    secret = tree.parent / "outside" / "secret"
    os.chmod(secret, 0o640)
    path = tree / "src" / "a.txt"
    fd = os.open(path, os.O_RDONLY)
    try:
        chmod_fd(fd, str(path), 0o600)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        os.unlink(path)
        os.symlink(tree.parent / "outside" / "secret", path)
        with pytest.raises(OSError) as got:
            chmod_fd(fd, str(path), 0o644)
        assert got.value.errno == errno.ELOOP
    finally:
        os.close(fd)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o640


def test_syncfs_says_when_it_cannot_flush(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows: no syncfs, no os.sync, no folder handle. The store then syncs each file."""
    monkeypatch.setattr(atomic, "_syncfs", atomic._no_syncfs)
    monkeypatch.delattr(os, "sync")
    assert atomic.syncfs(tmp_path) is False
    real_open = os.open

    def no_folders(path: Any, flags: int, *a: Any, **kw: Any) -> int:
        if flags & getattr(os, "O_DIRECTORY", 0):
            raise PermissionError(errno.EACCES, "a folder", str(path))
        return real_open(path, flags, *a, **kw)

    monkeypatch.setattr(os, "open", no_folders)
    assert atomic.syncfs(tmp_path) is False
    atomic.fsync_dir(tmp_path)  # nothing to do there, and no error


def test_fsync_file_reopens_for_writing_where_reading_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FlushFileBuffers needs a handle open for writing (Windows: EBADF otherwise)."""
    path = tmp_path / "f"
    path.write_bytes(b"x")
    real = os.fsync
    seen: list[int] = []

    def picky(fd: int) -> None:
        flags = os.O_ACCMODE & _fl(fd)
        seen.append(flags)
        if flags == os.O_RDONLY:
            raise OSError(errno.EBADF, "read-only handle")
        real(fd)

    monkeypatch.setattr(os, "fsync", picky)
    atomic.fsync_file(path)
    assert seen == [os.O_RDONLY, os.O_RDWR]


def _fl(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETFL)


def test_forced_paths_choose_the_path_implementation(tmp_path: Path) -> None:
    """TURNBACK_FS_PATHS=1 (tests only) gives what Windows' capabilities give."""
    code = ("from turnback.fs import osflags, folders; import os, sys;"
            "r = folders.open_root(sys.argv[1]);"
            "print(osflags.DESCRIPTORS, osflags.O_NOFOLLOW, osflags.O_DIRECTORY,"
            " type(r).__name__)")
    root = Path(turnback.__file__).parents[1]
    for env, want in (("1", "False 0 0 PathFolder"), ("", None)):
        out = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(root), "TURNBACK_FS_PATHS": env},
            timeout=60, check=True)
        if want is not None:
            assert out.stdout.split() == want.split()
        else:
            got = out.stdout.split()
            assert got[0] == "True" and got[3] == "FdFolder"
            assert int(got[1]) == os.O_NOFOLLOW


def test_open_root_of_the_mode_in_use(tmp_path: Path) -> None:
    r: Folder = folders.open_root(str(tmp_path))
    with r:
        want = FdFolder if folders.DESCRIPTORS else PathFolder
        assert isinstance(r, want)


def test_a_read_only_file_is_replaced_and_removed_as_on_posix(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows refuses to replace or delete a file with the read-only attribute (a
    Perforce checkout's files are so); POSIX does both. The path implementation clears
    the attribute and does it. Faked here: Linux has no such attribute."""
    path = tree / "src" / "a.txt"
    (tree / "src" / "new").write_bytes(b"new\n")
    readonly = {str(path)}
    real_lstat, real_replace, real_unlink = os.lstat, os.replace, os.unlink

    def lstat(p: Any, *a: Any, **kw: Any) -> Any:
        st = real_lstat(p, *a, **kw)
        if os.fspath(p) in readonly:
            return SimpleNamespace(st_mode=st.st_mode, st_ino=st.st_ino, st_dev=st.st_dev,
                                   st_file_attributes=0x1)
        return st

    def refusing(real: Any) -> Any:
        def call(*args: Any) -> None:
            if os.fspath(args[-1]) in readonly:
                raise PermissionError(errno.EACCES, "read-only", os.fspath(args[-1]))
            real(*args)
        return call

    def chmod(p: Any, mode: int) -> None:
        readonly.discard(os.fspath(p))

    with monkeypatch.context() as patch:  # undone before tmp_path's clean-up
        patch.setattr(os, "lstat", lstat)
        patch.setattr(os, "replace", refusing(real_replace))
        patch.setattr(os, "unlink", refusing(real_unlink))
        patch.setattr(os, "chmod", chmod)
        src = enter_path(str(tree / "src"))
        src.rename("new", "a.txt")
        assert path.read_bytes() == b"new\n"
        readonly.add(str(path))
        src.unlink("a.txt")
        assert not path.exists()
        readonly.add(str(tree / "src" / "gone"))
        with pytest.raises(PermissionError):  # refused, and no read-only file there: raised
            src.unlink("gone")
