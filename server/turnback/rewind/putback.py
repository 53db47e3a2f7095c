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
from collections.abc import Callable

from ..fs.exchange import rename_no_replace
from ..fs.folders import FdFolder, Folder
from ..fs.hardlinks import makes_links

SAVED_INFIX = ".turnback-saved-"


def saved_tag() -> str:
    """The hex digits of a saved name (drawn again where a file of that name stands)."""
    return os.urandom(4).hex()


def put_back(dfd: Folder, kept: str, name: str,
             is_target: Callable[[str], bool] | None,
             saved_too: list[str] | None = None) -> str | None:
    """Move the file ``kept`` to ``name``: over what stands there only where ``is_target``
    (None: never) says of it that it is the rewind's own write, else only where nothing
    stands. Returns None once in place, or the name it was saved aside under (something
    else stands at ``name``). OSError when it could not be moved at all: it keeps ``kept``.
    ``saved_too`` gets the name of any other file this left aside: a save that could not
    go back (a third one stood at ``name`` by then, or that rename was refused), for the
    caller's message to name.

    The rewind's write is first moved aside in one rename that replaces nothing, then
    looked at there: a rename of ``kept`` over a name looked at just before replaced a save
    renamed over it in between (trust28). Moved aside and not the rewind's write (that
    save), it goes back; else it is unlinked (a checkpoint holds it) and ``kept`` is put in
    place replacing nothing: a save come to ``name`` meanwhile stays. Every byte is kept
    that way, where a swap would have to swap a save back again, racing once more."""
    aside = None  # where the rewind's write was moved, until ``kept`` is in place
    if is_target is not None and is_target(name):
        aside = _move_aside(dfd, name)
        if aside is not None and not is_target(aside):
            # a save put at ``name`` since the look: the newest, back in place
            try:
                _rename_no_replace(dfd, aside, name)
            except OSError:
                # a third save (FileExistsError), or the rename refused (EIO): the second
                # stays aside, given the path's name to be found by, and named to the
                # caller (trust29 named it for a third save only; redteam38)
                try:
                    aside = save_aside(dfd, aside, name)
                except OSError:
                    pass  # it keeps ``.turnback-saved-<hex>``: named as that
                if saved_too is not None:
                    saved_too.append(aside)
            return save_aside(dfd, kept, name)
    try:
        _move_no_replace(dfd, kept, name)
        return None
    except FileExistsError:
        return save_aside(dfd, kept, name)  # a save came while the path was free: it stays
    except OSError:
        if aside is not None:
            # the path as it was: the rewind's write is the roll-back's to undo
            try:
                _rename_no_replace(dfd, aside, name)
                aside = None
            except OSError:
                pass
        raise
    finally:
        if aside is not None:
            try:
                dfd.unlink(aside)  # the rewind's write, looked at there: a checkpoint holds it
            except OSError:
                pass  # a stray saved name, its bytes a checkpoint's


def clear_special(dfd: Folder, name: str) -> bool:
    """Take away the FIFO, socket or device at ``name`` (nothing a rewind keeps: a plain
    rename replaced it) so that a create renames without replacing: a save renamed over it
    between the look and that plain rename was lost (redteam36). Moved aside first, looked
    at there, unlinked only if it still is one. True once ``name`` is free; False where
    what was moved is something else (a save come since the look): it goes back, replacing
    nothing (a newer one there: it keeps its saved name)."""
    aside = _move_aside(dfd, name)
    if aside is None:
        return True
    if is_special(dfd.lstat(aside)):
        dfd.unlink(aside)
        return True
    try:
        _rename_no_replace(dfd, aside, name)
    except FileExistsError:
        pass
    return False


def is_special(st: os.stat_result) -> bool:
    """A FIFO, socket or device: no file, folder or link."""
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)
                or stat.S_ISLNK(st.st_mode))


def _move_aside(dfd: Folder, name: str) -> str | None:
    """Rename ``name`` to a fresh saved name (``.turnback-saved-<8 hex>``, which no
    clean-up removes: a crash before the caller's unlink keeps it, whatever it is);
    None where nothing stands at ``name``."""
    for _ in range(16):
        aside = f"{SAVED_INFIX}{saved_tag()}"
        try:
            _rename_no_replace(dfd, name, aside)
            return aside
        except FileExistsError:
            continue
        except FileNotFoundError:
            return None
    raise FileExistsError(errno.EEXIST, "every saved name drawn names a file already",
                          os.path.join(dfd.path, name))


def _rename_no_replace(dfd: Folder, src: str, dst: str) -> None:
    """Rename ``src`` (whatever it is) to ``dst`` unless something stands at ``dst``
    (FileExistsError): in one step where the system can (``fs/exchange.py``), else after
    a look (folders by path, an older kernel)."""
    if isinstance(dfd, FdFolder) and rename_no_replace(dfd.fd, dfd.path, src, dst):
        return
    _rename_if_free(dfd, src, dst)


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
        except FileExistsError:
            raise
        except OSError as exc:
            # a folder (``link`` refuses any), swapped out of a path by a rewind
            # (``Applier._stranger_out``; left at a rewind's temporary name it was left out
            # of every checkpoint: redteam34), a file this process may not link where links
            # work (EPERM: Linux's ``fs.protected_hardlinks`` refuses a file another user
            # owns that this one cannot read and write), or a file system with no hard
            # links (asked of it, not told by the errno: each answers its own): renamed,
            # replacing nothing. A refusal of this link where links work (EIO) is raised
            if not (exc.errno == errno.EPERM or stat.S_ISDIR(dfd.lstat(src).st_mode)
                    or not makes_links(dfd)):
                raise
            _rename_no_replace(dfd, src, dst)
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
