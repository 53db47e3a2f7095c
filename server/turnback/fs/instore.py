"""A file of the store's own replaced by a name that follows no link on the way.

A store holding a link to a folder is refused when it is opened, but a sync or anything
that writes the store may swap one in later, while a server holds it open for hours.
Caches named by input (``index/acc/<session id>.json``) written by path would then be
made, or would replace a user's file of that name, in any folder the link names. They are
written with ``fs/replacing.replace_file`` into the folder this opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import Unsafe
from .folders import Folder, open_dir, open_root
from .privacy import DIR_MODE


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
