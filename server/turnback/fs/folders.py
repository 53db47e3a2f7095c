"""Folders that a swapped-in link cannot redirect: the one seam between Turnback and the
two ways a platform lets a program reach the files in a folder.

A rewind writes and removes workspace files, a diff and a scan read them, and anyone who
can write the workspace may replace a folder by a link (a symlink, or on Windows a
junction) to ``~`` while that happens. ``Folder`` offers what those callers need — list,
``lstat``, open a file, read a link, make a link or folder, unlink, rename, open a
subfolder — never following a link at the last name, and ``open_dir`` reaches a folder
below another without following one on the way. Two implementations, chosen once by
capability (``osflags.DESCRIPTORS``):

- ``FdFolder`` (Linux, macOS): a descriptor on the folder; every call is relative to it
  (``dir_fd=``, ``os.scandir(fd)``) and opens with ``O_NOFOLLOW``. Once a folder is open,
  nothing anyone renames or links makes a call reach another folder.
- ``PathFolder`` (Windows' CPython, which has neither ``dir_fd`` nor ``O_NOFOLLOW`` nor a
  descriptor ``scandir``): the folder's absolute path and its identity (``st_dev``,
  ``st_ino``, which Windows' Python fills from the file's id). A folder is entered only
  if ``lstat`` says it is a folder and no link or reparse point (a junction); a file is
  ``lstat``-ed before it is opened and its descriptor ``fstat``-ed after (same identity,
  else refused: it was swapped meanwhile); before each change (unlink, rename, a file
  created) and after each listing or open, the folder's own identity is checked again.
  What is weaker, and why it cannot be closed with what Windows' Python offers, is in
  ``docs/RELIABILITY.md`` ("Windows").

Errors keep the descriptor implementation's: a link where none may be followed raises
``OSError(ELOOP)``, a file on the way ``NotADirectoryError``, so callers handle both alike.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import Protocol

from ..errors import Unsafe
from .osflags import DESCRIPTORS, O_CLOEXEC

# Windows: a reparse point (symlink, junction, mount point, cloud placeholder) whatever
# st_mode says; os.lstat reports a junction as a folder
_REPARSE = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)
# the descriptor implementation's own flags, whatever TURNBACK_FS_PATHS says (it exists only
# where they do; osflags' are 0 when the path implementation is forced)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | O_CLOEXEC


_NAME_SURROGATE = 0x20000000  # a reparse tag's bit: the point names another path


def is_link(st: os.stat_result) -> bool:
    """A symlink, or (Windows) a reparse point naming another path (a junction, a mount
    point): nothing Turnback goes through. Other reparse points (OneDrive's placeholders,
    deduplicated files) are the files they hold."""
    if stat.S_ISLNK(st.st_mode):
        return True
    if not getattr(st, "st_file_attributes", 0) & _REPARSE:
        return False
    tag = getattr(st, "st_reparse_tag", None)
    return tag is None or bool(tag & _NAME_SURROGATE)


def identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _loop(path: str, why: str = "is a link") -> OSError:
    return OSError(errno.ELOOP, f"{why}; not followed", path)


class Folder(Protocol):
    """An open folder (see the module's docstring). Close it, or use ``with``."""

    path: str  # its absolute path, for messages (and the path implementation's calls)

    def scandir(self) -> list[os.DirEntry[str]]: ...
    def listdir(self) -> list[str]: ...
    def lstat(self, name: str) -> os.stat_result: ...
    def open(self, name: str, flags: int, mode: int = 0o777) -> int: ...
    def readlink(self, name: str) -> str: ...
    def symlink(self, target: str | bytes, name: str) -> None: ...
    def mkdir(self, name: str, mode: int) -> None: ...
    def unlink(self, name: str) -> None: ...
    def rmdir(self, name: str) -> None: ...
    def rename(self, src: str, dst: str) -> None: ...
    def child(self, name: str) -> Folder: ...
    def stat_self(self) -> os.stat_result: ...
    def chmod_self(self, mode: int) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Folder: ...
    def __exit__(self, *exc: object) -> None: ...


def _named(exc: OSError, folder: str, *, both: bool = False, second: bool = False) -> None:
    """Give ``exc`` (re-raised: its type, number and traceback kept) the names a call
    through a folder's descriptor gave it, joined to that folder's path: ``both`` for a
    rename or a link (two names in the folder), ``second`` for a symlink (its target is
    the user's)."""
    if (both or not second) and isinstance(exc.filename, str):
        exc.filename = os.path.join(folder, exc.filename)
    if (both or second) and isinstance(exc.filename2, str):
        exc.filename2 = os.path.join(folder, exc.filename2)


class FdFolder:
    """A folder held by a descriptor (POSIX)."""

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path

    def scandir(self) -> list[os.DirEntry[str]]:
        with os.scandir(self.fd) as it:
            return list(it)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd)

    # Each call's error names the file by its folder's path too: the system names only
    # what it was given, a bare name, and "No such file or directory ('objmap.tmp')" told
    # a user of the CLI nothing (``_named``)
    def lstat(self, name: str) -> os.stat_result:
        try:
            return os.lstat(name, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise

    def open(self, name: str, flags: int, mode: int = 0o777) -> int:
        try:
            return os.open(name, flags | _NOFOLLOW, mode, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise

    def readlink(self, name: str) -> str:
        try:
            return os.readlink(name, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise

    def symlink(self, target: str | bytes, name: str) -> None:
        try:
            os.symlink(target, name, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path, second=True)
            raise

    def mkdir(self, name: str, mode: int) -> None:
        try:
            os.mkdir(name, mode, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise

    def unlink(self, name: str) -> None:
        try:
            os.unlink(name, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise

    def rmdir(self, name: str) -> None:
        try:
            os.rmdir(name, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise

    def rename(self, src: str, dst: str) -> None:
        try:
            os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path, both=True)
            raise

    def link(self, src: str, dst: str) -> None:
        """A second name for the file ``src`` (a link itself, never what it points to)."""
        try:
            os.link(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        except OSError as exc:
            _named(exc, self.path, both=True)
            raise

    def child(self, name: str) -> FdFolder:
        try:
            fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            _named(exc, self.path)
            raise
        return FdFolder(fd, os.path.join(self.path, name))

    def stat_self(self) -> os.stat_result:
        return os.fstat(self.fd)

    def chmod_self(self, mode: int) -> None:
        os.fchmod(self.fd, mode)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> FdFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PathFolder:
    """A folder held by its path and identity (Windows; see the module's docstring)."""

    def __init__(self, path: str, ident: tuple[int, int]) -> None:
        self.path = path
        self.ident = ident

    def _at(self, name: str) -> str:
        return os.path.join(self.path, name)

    def _still(self) -> None:
        """Refuse to go on if the folder was swapped (for a link, or another folder)."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            raise
        if is_link(st) or not stat.S_ISDIR(st.st_mode) or identity(st) != self.ident:
            raise _loop(self.path, "was replaced while Turnback used it")

    def scandir(self) -> list[os.DirEntry[str]]:
        with os.scandir(self.path) as it:
            listing = list(it)
        self._still()  # the listing was of this folder, not of one swapped in
        return listing

    def listdir(self) -> list[str]:
        names = os.listdir(self.path)
        self._still()
        return names

    def lstat(self, name: str) -> os.stat_result:
        return os.lstat(self._at(name))

    def open(self, name: str, flags: int, mode: int = 0o777) -> int:
        return open_path_nofollow(self._at(name), flags, mode, parent=self)

    def readlink(self, name: str) -> str:
        return os.readlink(self._at(name))

    def symlink(self, target: str | bytes, name: str) -> None:
        self._still()
        os.symlink(os.fsdecode(target), self._at(name))

    def mkdir(self, name: str, mode: int) -> None:
        self._still()
        os.mkdir(self._at(name), mode)

    def unlink(self, name: str) -> None:
        self._still()
        _or_writable(os.unlink, self._at(name))

    def rmdir(self, name: str) -> None:
        self._still()
        if is_link(os.lstat(self._at(name))):
            raise NotADirectoryError(errno.ENOTDIR, "a link, not a folder", self._at(name))
        os.rmdir(self._at(name))

    def rename(self, src: str, dst: str) -> None:
        self._still()
        # os.replace: Windows' os.rename never replaces
        _or_writable(lambda path: os.replace(self._at(src), path), self._at(dst))

    def child(self, name: str) -> PathFolder:
        return enter_path(self._at(name))

    def stat_self(self) -> os.stat_result:
        self._still()
        return os.lstat(self.path)

    def chmod_self(self, mode: int) -> None:
        self._still()
        os.chmod(self.path, mode)

    def close(self) -> None:
        pass

    def __enter__(self) -> PathFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_READONLY = getattr(stat, "FILE_ATTRIBUTE_READONLY", 0x1)


def _or_writable(call: Callable[[str], None], path: str) -> None:
    """``call(path)``; where Windows refuses it because ``path`` is a read-only file (which
    POSIX would remove or replace: only the folder's permissions matter there), the
    read-only attribute is cleared and the call made once more. The rewind wrote down
    the file's bytes and mode first, so an undo brings the read-only file back."""
    try:
        call(path)
        return
    except PermissionError:
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        if st is None or is_link(st) or not getattr(st, "st_file_attributes", 0) & _READONLY:
            raise
    os.chmod(path, stat.S_IREAD | stat.S_IWRITE)
    call(path)


def enter_path(path: str) -> PathFolder:
    """``path`` as a ``PathFolder`` if it is a folder and no link: ``OSError(ELOOP)`` for a
    link or reparse point, ``NotADirectoryError`` for anything else."""
    st = os.lstat(path)
    if is_link(st):
        raise _loop(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", path)
    return PathFolder(path, identity(st))


def open_path_nofollow(path: str, flags: int, mode: int = 0o777,
                       parent: PathFolder | None = None) -> int:
    """``os.open`` of ``path`` without following a link at its last name, where
    ``O_NOFOLLOW`` is missing: ``lstat`` before, ``fstat`` after, the same file or
    ``OSError(ELOOP)``. A file created (``O_CREAT``) must be new there or a regular
    file, and is looked at again after: a link put in its place meanwhile is refused
    (see docs/RELIABILITY.md for what that cannot undo)."""
    try:
        before: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
        before = None
    if before is not None and flags & os.O_CREAT and flags & os.O_EXCL:
        raise FileExistsError(errno.EEXIST, "already exists", path)
    if before is not None and is_link(before):
        raise _loop(path)
    if parent is not None and flags & os.O_CREAT:
        parent._still()
    fd = os.open(path, flags, mode)
    try:
        now = os.fstat(fd)
        if before is not None and identity(now) != identity(before):
            raise _loop(path, "was replaced while Turnback opened it")
        if before is None:
            after = os.lstat(path)
            if is_link(after) or identity(after) != identity(now):
                raise _loop(path, "was replaced while Turnback created it")
        if parent is not None:
            parent._still()  # the file was opened in this folder, not in one swapped in
    except BaseException:
        if before is None and flags & os.O_EXCL:
            _remove_created(path, now)
        os.close(fd)
        raise
    return fd


def _remove_created(path: str, created: os.stat_result) -> None:
    """Best effort: unlink the file this process just made with ``O_EXCL`` at ``path``
    (possibly through a link swapped in, so outside the folder meant), if ``path`` still
    names that very file. Only a name this process created exclusively (the rewind's
    ``.turnback-tmp-<pid>-<random>``) comes here, so a swap between the look and the
    unlink can only miss, never remove someone else's file."""
    try:
        if identity(os.lstat(path)) == identity(created):
            os.unlink(path)
    except OSError:
        pass


def chmod_fd(fd: int, path: str, mode: int) -> None:
    """Change the mode of the file open at ``fd`` (whose name is ``path``): through the
    descriptor where ``fchmod`` exists, else (Windows before 3.13, where only the
    read-only bit is kept) by name, after checking the name still holds that file."""
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
        return
    st = os.lstat(path)
    if is_link(st) or identity(st) != identity(os.fstat(fd)):
        raise _loop(path, "was replaced while Turnback changed its mode")
    os.chmod(path, mode)


def open_root(path: str) -> Folder:
    """The folder at ``path`` (the workspace, as its caller resolved it: a link there is
    the user's own choice and is followed)."""
    if DESCRIPTORS:
        return FdFolder(os.open(path, _DIR_FLAGS), path)
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", path)
    return PathFolder(real, identity(st))


class NotAFolder(Unsafe):
    """A component of the path is a file (not a symlink): nothing can stand below it."""


def open_dir(root: Folder, parts: list[str], *, create: bool, mode: int = 0o755) -> Folder:
    """Open folder ``parts`` under ``root`` without following any link.

    Returns a new ``Folder`` (caller closes). ``create`` makes missing folders (``mode``,
    less the umask). A link
    on the way raises ``Unsafe``, a file ``NotAFolder``, a missing folder
    ``FileNotFoundError``.
    """
    for name in parts:
        if name in ("", ".", "..") or "/" in name or "\0" in name or (
                not DESCRIPTORS and "\\" in name):
            raise Unsafe(f"'{'/'.join(parts)}' is not a plain path inside the workspace")
    if not parts:
        return _again(root)
    here: Folder = root
    try:
        for i, name in enumerate(parts):
            try:
                nxt = here.child(name)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    here.mkdir(name, mode)
                except FileExistsError:
                    pass
                nxt = _child_checked(here, parts, i)
            except OSError as exc:
                raise _refusal(here, parts, i, exc) from None
            if here is not root:
                here.close()
            here = nxt
        return here
    except BaseException:
        if here is not root:
            here.close()
        raise


def _child_checked(here: Folder, parts: list[str], i: int) -> Folder:
    try:
        return here.child(parts[i])
    except OSError as exc:
        raise _refusal(here, parts, i, exc) from None


def _refusal(here: Folder, parts: list[str], i: int, exc: OSError) -> BaseException:
    if not (isinstance(exc, NotADirectoryError) or exc.errno == errno.ELOOP):
        return exc
    try:
        st = here.lstat(parts[i])
        what = "a symlink" if is_link(st) else (
            "not a folder" if not stat.S_ISDIR(st.st_mode) else
            "being replaced while Turnback opens it")
    except OSError:
        what = "being replaced while Turnback opens it"  # a race: refuse too
    error = NotAFolder if what == "not a folder" else Unsafe
    return error(f"'{'/'.join(parts[: i + 1])}' is {what}; refusing to write through it")


def again(folder: Folder) -> Folder:
    """A second handle on ``folder`` (the caller closes each)."""
    return _again(folder)


def _again(folder: Folder) -> Folder:
    """A second handle on ``folder`` (the caller closes each)."""
    if isinstance(folder, FdFolder):
        return FdFolder(os.dup(folder.fd), folder.path)
    assert isinstance(folder, PathFolder)
    return PathFolder(folder.path, folder.ident)
