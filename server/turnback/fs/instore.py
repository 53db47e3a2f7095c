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


def open_store_folder(root: Path, parts: list[str], *, create: bool) -> Folder:
    """The folder ``parts`` of the store at ``root``, made 0700 if missing (``create``;
    else ``FileNotFoundError``), opened without following a link below ``root``:
    ``Unsafe`` naming the link (or file) in the way. The caller closes it."""
    top = open_root(str(root))
    try:
        return open_dir(top, parts, create=create, mode=DIR_MODE)
    finally:
        top.close()


@contextmanager
def store_folder(root: Path, parts: list[str]) -> Iterator[Folder]:
    """The folder ``parts`` of the store at ``root``, made if missing (0700), opened
    without following a link below ``root``: ``OSError`` if one is there."""
    try:
        folder = open_store_folder(root, parts, create=True)
    except Unsafe as exc:  # a link or a file on the way: a cache not written
        raise OSError(str(exc)) from None
    try:
        yield folder
    finally:
        folder.close()
