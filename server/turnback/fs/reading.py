"""Opening and reading files that anyone who can write the workspace may have replaced.

The store lives in the workspace, and ``.gitignore`` files are the workspace's own: any of
them may be swapped for a symlink (to ``/dev/zero``, to a file in ``~``), a FIFO (an
``open`` for reading waits for a writer forever) or a file of many gigabytes. A plain
``read_bytes()`` then hangs the CLI and the server or fills memory. Here a file is opened
``O_NOFOLLOW | O_NONBLOCK`` (a link is refused, a FIFO opens at once), ``fstat``-ed (only
a regular file is read) and read to a bound. Where ``O_NOFOLLOW`` is missing (Windows),
``folders.open_path_nofollow`` takes its place: ``lstat`` before, ``fstat`` after.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import StoreDamaged
from . import instore
from .folders import Folder, open_path_nofollow
from .osflags import DESCRIPTORS, O_BINARY, O_CLOEXEC, O_NONBLOCK
from .osflags import O_NOFOLLOW as NOFOLLOW

_READ = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY


class NotRegular(StoreDamaged):
    """A link, FIFO, device or folder where a regular file was expected."""


class TooLarge(StoreDamaged):
    """A file larger than anything Turnback writes there."""


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a socket"), for a refusal."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


# what ``open`` answers for a socket (ENXIO on Linux, EOPNOTSUPP on macOS), a device
# without its driver (ENODEV) and a FIFO opened to write without a reader (ENXIO)
_NOT_A_FILE = frozenset({errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV})


def _what_is_at(path: Path | str, folder: Folder | None) -> str:
    """What stands at ``path`` (in ``folder`` when given), for a refusal's words."""
    try:
        st = folder.lstat(os.fspath(path)) if folder is not None else os.lstat(path)
    except OSError:
        return "not a file"
    return kind_of(st.st_mode)


def _refuse(path: Path | str, what: str) -> NotRegular:
    return NotRegular(f"{path} is {what}, not a regular file; Turnback does not read through it. "
                      "Move it out of the way (run 'turnback fsck' if it is in the store)")


def open_append(path: Path | str, *, create: int | None = None,
                in_folder: Folder | None = None) -> int:
    """A read-write, append-only descriptor on the regular file at ``path``, never through a
    link (a planted ``checkpoints.jsonl -> ~/.profile`` must not get Turnback's lines);
    created with mode ``create`` when given and absent. ``in_folder``: the folder holding
    ``path``, already open (the caller's, not closed here): its name opened there."""
    return open_append_sized(path, create=create, in_folder=in_folder)[0]


def open_append_sized(path: Path | str, *, create: int | None = None,
                      in_folder: Folder | None = None) -> tuple[int, int]:
    """``open_append``'s descriptor and the file's size as its check of the file's kind
    saw it: an appender that looks at the file's end needs no ``fstat`` of its own (two
    of each an at-once checkpoint made; bench/RESULTS.md, branch ``atonce34``)."""
    flags = os.O_RDWR | os.O_APPEND | O_CLOEXEC | O_BINARY
    flags |= os.O_CREAT if create is not None else 0
    if in_folder is not None:
        return _open_sized(os.path.basename(path), flags, create or 0, folder=in_folder,
                           shown=path)
    folder = instore.folder_of(path, create=False)  # a store's file: no link on the way
    if folder is None:
        return _open_sized(path, flags, create or 0)
    try:
        return _open_sized(os.path.basename(path), flags, create or 0, folder=folder,
                           shown=path)
    finally:
        folder.close()


def open_regular(path: Path | str, *, follow: bool = False, folder: Folder | None = None) -> int:
    """A descriptor on the regular file at ``path``; the caller closes it.

    Raises ``FileNotFoundError`` when nothing is there and ``NotRegular`` for anything
    else than a regular file (with ``follow=False``, a symlink too, even one to a file).
    ``folder``: ``path`` is a name in that folder (see ``folders.open_dir``), never
    followed if a link.
    """
    return _open_checked(path, _READ, follow=follow, folder=folder)


def _open_checked(path: Path | str, flags: int, mode: int = 0, *, follow: bool = False,
                  folder: Folder | None = None, shown: Path | str | None = None) -> int:
    """``os.open`` not following a last link (unless ``follow``), then ``NotRegular`` (and
    the descriptor closed) for a link or anything but a regular file. ``shown``: the
    file's path for the refusal; in ``folder`` by default its folder's path joined to
    the name (redteam40, redteam41: "checkpoints.jsonl is a symbolic link" named no store)."""
    return _open_sized(path, flags, mode, follow=follow, folder=folder, shown=shown)[0]


def _open_sized(path: Path | str, flags: int, mode: int = 0, *, follow: bool = False,
                folder: Folder | None = None, shown: Path | str | None = None
                ) -> tuple[int, int]:
    """``_open_checked``'s descriptor and the size its ``fstat`` saw."""
    if shown is None:
        shown = os.path.join(folder.path, path) if folder is not None else path
    try:
        if folder is not None:
            fd = folder.open(os.fspath(path), flags, mode)
        elif follow:
            fd = os.open(path, flags, mode)
        elif DESCRIPTORS:
            fd = os.open(path, flags | NOFOLLOW, mode)
        else:
            fd = open_path_nofollow(os.fspath(path), flags, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(shown, "a symbolic link") from None
        if exc.errno == errno.EISDIR:  # opened to write: the open itself refuses a folder
            raise _refuse(shown, "a folder") from None
        if exc.errno in _NOT_A_FILE:
            # a socket (a device without its driver, a FIFO opened to write with no
            # reader): a bare OSError, answered -32603, and a store whose journal was
            # pending did not open at all (a socket at oplog.jsonl; redteam47)
            raise _refuse(shown, _what_is_at(path, folder)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(shown, kind_of(st.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def require_regular(fd: int, path: Path | str) -> None:
    """Raise ``NotRegular`` unless ``fd`` is a regular file (for descriptors opened to write)."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise _refuse(path, kind_of(mode))


def read_fd(fd: int, limit: int, path: Path | str) -> bytes:
    """All of the open regular file ``fd``, refused (``TooLarge``) past ``limit`` bytes."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise TooLarge(f"{path} holds {size:,} bytes, more than the {limit:,} Turnback reads "
                       "there; move it out of the way (run 'turnback fsck' if it is in the store)")
    chunks: list[bytes] = []
    left = limit + 1  # a file that grows while read is cut past the limit, never read forever
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:
        raise TooLarge(f"{path} grew past {limit:,} bytes while read; try again")
    return b"".join(chunks)


def read_regular(path: Path | str, *, limit: int, follow: bool = False,
                 folder: Folder | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (see ``open_regular`` and ``read_fd``)."""
    fd = open_regular(path, follow=follow, folder=folder)
    try:
        return read_fd(fd, limit, path)
    finally:
        os.close(fd)
