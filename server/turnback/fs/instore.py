"""The store's files written, replaced and removed through folders opened from its root
without following a link.

A store holding a link to a folder is refused when it is opened, but a sync, a checkout
or an agent's command may swap one in later, while a server holds the store for hours:
every write by path would then land in the folder the link names (session lines, caches
named by input such as ``index/acc/<session id>.json``, the rewind's journal), and a
removal would remove a file there. Each such write of a store this process opened
(``fs/storeroots.py``) goes through a folder this module opens for it: ``dir_fd``-relative
calls, or ``PathFolder``'s identity checks where there is no ``dir_fd``. Held once
reached and lent to each write after one ``stat`` of its path matches it (opening the lock's
and the file's folders for every session event cost +18-24 µs of ~68; held, +9-16:
bench/RESULTS.md, issue 17, ``trust17``).

The root itself is opened by its path and compared with its identity at the open: a link
or another folder put in place of ``.turnback`` is refused (not written into, and the
original, wherever it went, not written either), naming the store and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import LinkedInStore, Unsafe
from . import storeroots
from .folders import FdFolder, Folder, again, identity, open_dir, open_root
from .privacy import DIR_MODE, make_dir


def open_store_folder(root: Path | str, parts: list[str], *, create: bool) -> Folder:
    """The folder ``parts`` of the store at ``root``, made 0700 if missing (``create``;
    else ``FileNotFoundError``), opened without following a link below ``root``:
    ``Unsafe`` naming the link (or file) in the way; ``LinkedInStore`` if ``root`` is an
    open store's and no longer the folder opened. The caller closes it."""
    try:
        top = open_root(str(root))
    except (FileNotFoundError, NotADirectoryError):
        if storeroots.identity(str(root)) is None:
            raise
        raise _replaced(str(root)) from None  # an open store's root gone: nothing there
    try:
        _same_root(top, str(root))
        return open_dir(top, parts, create=create, mode=DIR_MODE)
    finally:
        top.close()


def _same_root(top: Folder, root: str) -> None:
    was = storeroots.identity(root)
    if was is not None and identity(top.stat_self()) != was:
        raise _replaced(root)


def _replaced(root: str) -> LinkedInStore:
    return LinkedInStore(
        f"the store {root} is no longer the folder Turnback opened: a link, another "
        "folder or nothing was put in its place since, and Turnback writes and removes "
        f"nothing there. Look at what {root} is now (and where a link points), then open "
        "the store again (restart the editor's window, or 'turnback serve --stop')")


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


def folder_of(path: Path | str, *, create: bool) -> Folder | None:
    """The folder holding ``path``, opened from its store's root without following a link
    (``create``: missing folders made, 0700), if ``path`` is in a store this process
    opened; None otherwise (written by path, as before). ``LinkedInStore`` names a link
    (or a file) in the way; ``FileNotFoundError`` when missing and not ``create``. The
    caller closes it."""
    where = storeroots.find(path)
    if where is None:
        return None
    return _open_parent(where[0], where[1][:-1], path, create=create)


def _open_parent(root: str, parts: list[str], path: Path | str, *, create: bool) -> Folder:
    try:
        return _held_or_opened(root, parts, create=create)
    except LinkedInStore:
        raise
    except Unsafe as exc:
        raise LinkedInStore(
            f"{exc.message} (in the store {root}, on the way to {path}): it was put there "
            "after the store was opened, and Turnback writes and removes nothing through "
            "it, so nothing was written or removed. Remove it (see what it points to "
            "first), then try again") from None


def _held_or_opened(root: str, parts: list[str], *, create: bool) -> Folder:
    """``open_store_folder``, or the folder held since the last time its path led to it,
    lent: the path ``lstat``-ed (the root: ``stat``-ed) and compared with the held
    folder's identity, which no other folder can take while it is held open. One ``stat``
    instead of an ``open`` and a ``close`` a name on the way (a session event's append
    opens two folders: its lock's and its file's). A link or another folder swapped in
    shows as another identity: the folder is opened again, and refused there. What a
    swap between the look and the write can do: write in the store's own folder,
    wherever it was moved (never in one the link names)."""
    names = tuple(parts)
    kept = storeroots.held(root, names)
    if kept is not None:
        try:
            st = os.lstat(kept.path) if parts else os.stat(root)
        except OSError:
            st = None
        # a folder, not a link that took a removed folder's inode number (with no
        # descriptor held, as PathFolder holds none, the number is free for reuse)
        if st is not None and stat.S_ISDIR(st.st_mode) and identity(st) == kept.ident and (
                isinstance(kept.folder, FdFolder) or _no_link_above(root, parts)):
            lent = kept.lend()
            if lent is not None:
                return lent
        storeroots.drop(root, names, kept)
    opened = open_store_folder(root, parts, create=create)
    try:
        storeroots.hold(root, names, storeroots.Kept(
            again(opened), identity(opened.stat_self()), os.path.join(root, *parts)))
    except BaseException:
        opened.close()
        raise
    return opened


def _no_link_above(root: str, parts: list[str]) -> bool:
    """Whether the root (as opened) and each folder above ``parts``' last are folders, not
    links. Only for a folder held by path (``PathFolder``): its inode number is free for
    reuse once it is removed, and ext4 gives it to a new folder within a few tries, so a
    link put in place of ``index`` above a new ``acc`` with the old number passed the look
    at the path, and the write went through the link (redteam13). A descriptor pins the
    number: no look needed (one ``lstat`` a level here)."""
    try:
        st = os.lstat(root)
        if stat.S_ISLNK(st.st_mode) or identity(st) != storeroots.identity(root):
            return False
        for i in range(1, len(parts)):
            if not stat.S_ISDIR(os.lstat(os.path.join(root, *parts[:i])).st_mode):
                return False
    except OSError:
        return False
    return True


def make_folder(path: Path | str) -> bool:
    """Make the folder ``path`` (and its missing parents, 0700) if it is in a store this
    process opened, without following a link: False if it is in none."""
    where = storeroots.find(path)
    if where is None:
        return False
    _open_parent(where[0], where[1], path, create=True).close()
    return True


def open_file(path: Path | str, flags: int, mode: int = 0, *, make_dirs: bool = False,
              in_folder: Folder | None = None) -> int:
    """``os.open(path, flags, mode)``; for ``path`` in a store this process opened, through
    its folder, never following a link on the way or at its name (``LinkedInStore`` names
    it). ``make_dirs``: missing folders are made (0700). ``in_folder``: the folder holding
    ``path``, already open (the caller's, not closed here): its name opened there."""
    if in_folder is not None:
        return _open_named(in_folder, path, flags, mode)
    folder = folder_of(path, create=make_dirs)
    if folder is None:
        try:
            return os.open(path, flags, mode)
        except FileNotFoundError:
            if not make_dirs:
                raise
            make_dir(Path(os.path.dirname(path) or "."))
            return os.open(path, flags, mode)
    try:
        return _open_named(folder, path, flags, mode)
    finally:
        folder.close()


def _open_named(folder: Folder, path: Path | str, flags: int, mode: int) -> int:
    """``path``'s name opened in ``folder``, the folder holding it."""
    try:
        return folder.open(os.path.basename(path), flags, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkedInStore(
                f"{path} is a link (or was replaced while Turnback opened it); Turnback "
                "writes nothing through it. Remove it (see what it points to first), "
                "then try again") from None
        raise


def unlink(path: Path | str, *, missing_ok: bool = True) -> None:
    """Remove the file at ``path``: in a store this process opened, through its folder
    opened without following a link (a link in the way raises ``LinkedInStore``, never
    removes a file where it points); elsewhere by path."""
    try:
        folder = folder_of(path, create=False)
        if folder is None:
            os.unlink(path)
            return
        try:
            folder.unlink(os.path.basename(path))
        finally:
            folder.close()
    except FileNotFoundError:
        if not missing_ok:
            raise


def rename(src: Path | str, dst: Path | str) -> None:
    """``os.replace(src, dst)``, two names in one folder; in a store this process opened,
    through that folder opened without following a link."""
    folder = folder_of(dst, create=False)
    if folder is None:
        os.replace(src, dst)
        return
    try:
        folder.rename(os.path.basename(src), os.path.basename(dst))
    finally:
        folder.close()

