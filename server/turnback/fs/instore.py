"""A file of the store's own replaced by a name that follows no link on the way.

A store holding a link to a folder is refused when it is opened, but a sync or anything
that writes the store may swap one in later, while a server holds it open for hours.
Caches named by input (``index/acc/<session id>.json``) written by path would then be
made, or would replace a user's file of that name, in any folder the link names.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ..errors import Unsafe
from .atomic import TMP_PREFIX
from .folders import Folder, open_dir, open_root
from .osflags import O_BINARY, O_CLOEXEC
from .privacy import DIR_MODE, FILE_MODE


@contextmanager
def store_folder(root: Path, parts: list[str]) -> Iterator[Folder]:
    """The folder ``parts`` of the store at ``root``, made if missing (0700), opened
    without following a link below ``root``: ``OSError`` if one is there."""
    top = open_root(str(root))
    try:
        try:
            folder = open_dir(top, parts, create=True, mode=DIR_MODE)
        except Unsafe as exc:  # a link or a file on the way: a cache not written
            raise OSError(str(exc)) from None
    finally:
        top.close()
    try:
        yield folder
    finally:
        folder.close()


def replace_file(folder: Folder, name: str, data: bytes) -> None:
    """``name`` in ``folder`` holds ``data``, all or nothing (a temporary file renamed over
    it: a link, a FIFO or another's file planted there is replaced, never written into)."""
    tmp = f"{TMP_PREFIX}{name}.{os.getpid()}.{os.urandom(4).hex()}"
    fd = folder.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY | O_CLOEXEC,
                     FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        with suppress(OSError):
            folder.unlink(tmp)
        raise
    os.close(fd)
    try:
        folder.rename(tmp, name)
    except BaseException:
        with suppress(OSError):
            folder.unlink(tmp)
        raise
