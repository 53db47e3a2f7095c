"""The folder an object file is created, replaced or removed in: ``objects/<sub>/`` of a
store, opened from the store's root without following a link on the way.

A store holding a link is refused when it is opened, but a server holds it for hours:
a link swapped in later for ``objects/``, ``objects/<xx>/``, ``objects/pack/`` or
``objects/log/`` (a checkout, an agent's command, a sync) made every later write by path
land in the folder the link names, as files whose bytes are the workspace's (zstd's raw
blocks carry them verbatim), and gc's removals remove files there. Every creation,
rename and removal of the object store goes through a ``Folder`` this opens
(``fs/folders.py``: ``dir_fd``-relative calls, or identity checks where there is no
``dir_fd``); a link on the way fails the write with ``Unsafe``, naming it.

Opened for each write, not held: a write of an object file is rare (a pack a batch, a
loose object per file of 512 KiB or more, a log per process), and the few system calls
this adds are measured in bench/RESULTS.md (issue 16, links16).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import Unsafe
from ..fs.folders import Folder, open_root
from ..fs.instore import open_store_folder
from ..fs.osflags import O_BINARY, O_CLOEXEC
from ..fs.privacy import DIR_MODE, FILE_MODE

NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC | O_BINARY

# The stores whose place the user named (``--store DIR``, ``TURNBACK_STORE``): a link in
# their layout is the user's own choice (objects on another disk), followed at open
# (``privacy.refuse_foreign``) and here alike.
_CHOSEN: set[str] = set()


def follow_links_in(store: Path) -> None:
    """Let the object files of the store at ``store`` (its root, resolved) be written
    through links in its layout: the user named that store."""
    _CHOSEN.add(str(store))


@contextmanager
def object_folder(folder: Path, *, create: bool = True) -> Iterator[Folder]:
    """``folder`` (``<store>/objects/<sub>``), made 0700 if missing (``create``; else
    ``FileNotFoundError``), open without following a link below the store's root:
    ``Unsafe`` naming the link (or file) in the way."""
    with store_subfolder(folder.parent.parent, folder, create=create) as held:
        yield held


@contextmanager
def store_subfolder(store: Path, folder: Path, *, create: bool) -> Iterator[Folder]:
    """``folder``, a folder below the store's root ``store``, opened as ``object_folder``
    says."""
    if str(store) in _CHOSEN:
        if create:
            os.makedirs(folder, DIR_MODE, exist_ok=True)
        held = open_root(str(folder))  # FileNotFoundError when missing, as below
        try:
            yield held
        finally:
            held.close()
        return
    try:
        held = open_store_folder(store, list(folder.relative_to(store).parts), create=create)
    except Unsafe as exc:
        raise Unsafe(
            f"{exc.message} (in the store {store}): it was put there after the store "
            "was opened, and Turnback writes and removes nothing through it, so "
            "nothing was stored or removed. Remove it (see what it points to first), "
            "then try again") from None
    try:
        yield held
    finally:
        held.close()


def create_in(folder: Folder, name: str) -> int:
    """A new file ``name`` in ``folder`` (which must not hold it), 0600, open for writing."""
    return folder.open(name, NEW_FILE, FILE_MODE)


def unlink_object_file(path: Path, *, missing_ok: bool = True) -> None:
    """Remove the object file at ``path`` (``<store>/objects/<sub>/<name>``); see
    ``unlink_in_store``."""
    unlink_in_store(path.parents[2], path, missing_ok=missing_ok)


def unlink_in_store(store: Path, path: Path, *, missing_ok: bool = True) -> None:
    """Remove the file at ``path``, below the store's root ``store``, through its folder
    opened without following a link: a link swapped in for a folder on the way makes this
    raise ``Unsafe``, never remove a file where it points."""
    try:
        with store_subfolder(store, path.parent, create=False) as folder:
            folder.unlink(path.name)
    except FileNotFoundError:
        if not missing_ok:
            raise
