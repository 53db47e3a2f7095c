"""The stores this process holds open, each with its root's identity at the open.

A write below one of them goes through folders opened from its root without following a
link (``fs/instore.py``), whichever helper makes it (``atomic.py``, ``privacy.make_dir``,
``reading.open_append``, ``locks``): a link swapped in for ``sessions/``, ``cache/``,
``index/`` or ``run/`` after the open, while a server holds the store for hours, is
refused instead of written through. The identity tells a root replaced since (a link, or
another folder, put in place of ``.turnback``): refused too. A store the user named
(``--store DIR``) is never listed: links in its layout are the user's choice.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .folders import FdFolder, Folder, again

# root -> (st_dev, st_ino) at the open; root -> opens not closed yet
_IDENT: dict[str, tuple[int, int]] = {}
_OPENS: dict[str, int] = {}
# root -> {names below it: the folder held there}: fs/instore.py's, closed with the
# store's last close
_HELD: dict[str, dict[tuple[str, ...], Kept]] = {}
_LOCK = threading.Lock()
# the deepest a store's own file lies below its root (objects/<xx>/<name>, index/acc/<id>)
_DEPTH = 4


class Kept:
    """A folder of an open store held open, lent to one caller at a time or many: each
    borrower's ``close`` gives it back, and it is closed once dropped and given back by
    all (a borrower never finds its descriptor closed, or reused for another file)."""

    def __init__(self, folder: Folder, ident: tuple[int, int], path: str) -> None:
        self.folder = folder
        self.ident = ident
        self.path = path  # what must still lead to it: the root, or the folder's path
        self._lent = 0
        self._dropped = False

    def lend(self) -> Folder | None:
        """The folder for one borrower, or None if it was dropped meanwhile (by another
        thread: its descriptor may be closed)."""
        shared = isinstance(self.folder, FdFolder)  # else a path and an identity: copied
        with _LOCK:
            if self._dropped:
                return None
            self._lent += shared
        return _Lent(self) if shared else again(self.folder)

    def give_back(self) -> None:
        with _LOCK:
            self._lent -= 1
            done = self._dropped and self._lent == 0
        if done:
            self.folder.close()

    def drop(self) -> None:
        """Close it now, or when the last borrower gives it back; once."""
        with _LOCK:
            if self._dropped:
                return
            self._dropped = True
            done = self._lent == 0
        if done:
            self.folder.close()


class _Lent(FdFolder):
    """A kept folder's descriptor as one borrower sees it: ``close`` gives it back."""

    def __init__(self, kept: Kept) -> None:
        assert isinstance(kept.folder, FdFolder)
        super().__init__(kept.folder.fd, kept.folder.path)
        self._kept: Kept | None = kept

    def close(self) -> None:
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.give_back()

def opened(root: Path) -> str:
    """Record the store at ``root`` (resolved, not a link) as open; the token to pass to
    ``closed``. Opened again, the identity is this open's, which refused a link."""
    key = os.fspath(root)
    st = os.stat(key)
    _IDENT[key] = (st.st_dev, st.st_ino)
    _OPENS[key] = _OPENS.get(key, 0) + 1
    _HELD.setdefault(key, {})
    return key


def closed(token: str) -> None:
    left = _OPENS.get(token, 0) - 1
    if left > 0:
        _OPENS[token] = left
    else:
        _OPENS.pop(token, None)
        _IDENT.pop(token, None)
        for kept in _HELD.pop(token, {}).values():
            kept.drop()


def identity(root: str) -> tuple[int, int] | None:
    """The identity ``root`` had when opened, or None if no open store has that root."""
    return _IDENT.get(root)


def find(path: Path | str) -> tuple[str, list[str]] | None:
    """The open store's root holding ``path`` and the names leading from it there, or
    None (a path of no open store's: written by path, as before). A few dictionary
    look-ups, no system call: ``path`` as its caller built it from the store's root."""
    if not _IDENT:
        return None
    here = os.fspath(path)
    names: list[str] = []
    for _ in range(_DEPTH + 1):
        here, sep, name = here.rpartition(os.sep)
        if not sep or not name:
            return None
        names.append(name)
        if here in _IDENT:
            names.reverse()
            return here, names
    return None


def held(root: str, names: tuple[str, ...]) -> Kept | None:
    """The folder ``names`` of the open store at ``root`` held open, or None."""
    return _HELD.get(root, {}).get(names)


def hold(root: str, names: tuple[str, ...], kept: Kept) -> None:
    """Keep ``kept`` as ``names`` of the open store at ``root`` (dropped when the store is
    closed, or when replaced). Dropped at once if no store at ``root`` is open."""
    with _LOCK:
        folders = _HELD.get(root) if root in _IDENT else None
        old = None if folders is None else folders.get(names)
        if folders is not None:
            folders[names] = kept
    if folders is None:
        kept.drop()
    if old is not None:
        old.drop()


def drop(root: str, names: tuple[str, ...], kept: Kept) -> None:
    """Stop holding ``kept`` as ``names`` of ``root`` (its path leads elsewhere now)."""
    with _LOCK:
        folders = _HELD.get(root, {})
        if folders.get(names) is kept:
            del folders[names]
    kept.drop()
