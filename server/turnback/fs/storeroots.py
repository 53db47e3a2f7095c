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
from pathlib import Path

# root -> (st_dev, st_ino) at the open; root -> opens not closed yet
_IDENT: dict[str, tuple[int, int]] = {}
_OPENS: dict[str, int] = {}
# the deepest a store's own file lies below its root (objects/<xx>/<name>, index/acc/<id>)
_DEPTH = 4


def opened(root: Path) -> str:
    """Record the store at ``root`` (resolved, not a link) as open; the token to pass to
    ``closed``. Opened again, the identity is this open's, which refused a link."""
    key = os.fspath(root)
    st = os.stat(key)
    _IDENT[key] = (st.st_dev, st.st_ino)
    _OPENS[key] = _OPENS.get(key, 0) + 1
    return key


def closed(token: str) -> None:
    left = _OPENS.get(token, 0) - 1
    if left > 0:
        _OPENS[token] = left
    else:
        _OPENS.pop(token, None)
        _IDENT.pop(token, None)


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
