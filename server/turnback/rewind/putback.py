"""Putting back in place a replaced file that a write reached while a rewind ran.

The file a rewind's rename replaced is kept by a second name until the answer; when a write
landed in it (``Applier._check_replaced``, or ``Applier.restore_late`` after a crash) it goes
back to its name, but only over the rewind's own write there, which a checkpoint holds. By
then that name may hold something newer (a save renamed over it after the rewind's rename,
the user's edit after a crash): that stays, and the older file is saved aside under a name
no clean-up removes and that replaces no file (``<name>.turnback-saved-<8 hex>``).
"""

from __future__ import annotations

import errno
import os
import stat

from ..fs.folders import FdFolder, Folder

SAVED_INFIX = ".turnback-saved-"


def saved_tag() -> str:
    """The hex digits of a saved name (drawn again where a file of that name stands)."""
    return os.urandom(4).hex()


def put_back(dfd: Folder, kept: str, name: str, over_target: bool) -> str | None:
    """Move the file ``kept`` to ``name``: over what stands there only when ``over_target``
    (the caller found there the rewind's own write), else only where nothing stands.
    Returns None once in place, or the name it was saved aside under (something else
    stands at ``name``). OSError when it could not be moved at all: it keeps ``kept``."""
    if over_target:
        dfd.rename(kept, name)
        return None
    try:
        _move_no_replace(dfd, kept, name)
        return None
    except FileExistsError:
        return save_aside(dfd, kept, name)


def save_aside(dfd: Folder, kept: str, name: str) -> str:
    """Give the file ``kept`` the name ``<name>.turnback-saved-<8 hex>`` (or
    ``.turnback-saved-<8 hex>`` where that is longer than the file system takes: its
    temporary name would be removed by the clean-up), replacing no file; returns it."""
    for _ in range(16):
        tag = saved_tag()
        for saved in (f"{name}{SAVED_INFIX}{tag}", f"{SAVED_INFIX}{tag}"):
            try:
                _move_no_replace(dfd, kept, saved)
                return saved
            except FileExistsError:
                break  # another file has that name: another tag
            except OSError as exc:
                if exc.errno != errno.ENAMETOOLONG:
                    raise
    raise FileExistsError(errno.EEXIST, "every saved name drawn names a file already",
                          os.path.join(dfd.path, kept))


def _move_no_replace(dfd: Folder, src: str, dst: str) -> None:
    """Rename ``src`` to ``dst`` unless something stands at ``dst`` (FileExistsError)."""
    if isinstance(dfd, FdFolder):
        try:
            dfd.link(src, dst)  # EEXIST whatever stands there, even a dangling link
        except PermissionError:
            # a folder (``link`` refuses one: EPERM), swapped out of a path by a rewind
            # (``Applier._stranger_out``): renamed, which replaces no file (ENOTDIR) and
            # no folder holding one (ENOTEMPTY); left at a rewind's temporary name it was
            # left out of every checkpoint (redteam34)
            st = dfd.lstat(src)
            if not stat.S_ISDIR(st.st_mode):
                raise
            _rename_if_free(dfd, src, dst)
            return
        dfd.unlink(src)
        return
    # folders reached by path hold no second names (``Applier._keep_replaced``): only a
    # saved name comes here, after a look
    _rename_if_free(dfd, src, dst)


def _rename_if_free(dfd: Folder, src: str, dst: str) -> None:
    """Rename ``src`` to ``dst`` if nothing stands there at the look (FileExistsError)."""
    try:
        dfd.lstat(dst)
    except FileNotFoundError:
        dfd.rename(src, dst)
        return
    raise FileExistsError(errno.EEXIST, "a file stands there", os.path.join(dfd.path, dst))
