"""A killed write's temporary file in the user's folders, removed at the next write of its file.

The store's own leftovers are found by gc and fsck (``TMP_PREFIX`` in the store's folders).
A file Turnback writes among the user's (an agent's hook settings in the workspace,
``importers/hooks.py``; an export, ``cli/export_cmd.py``) is replaced through a temporary
name beside it (``fs/replacing.py``, ``fs/atomic.py``): a kill between its write and its
rename left ``.tmp-<name>.<pid>.<8 hex>`` there for good. Only a file
``tempnames.is_leftover`` calls certainly ours is removed (its name down to the mark, its
writer gone, our uid, a minute old); anything else, the user's own look-alikes included,
is left. One listing of the folder a write: 4.5 us for a folder of 3 names, 0.47 ms for
one of 1,000 (bench/RESULTS.md, ``trust19``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from .folders import Folder, identity, open_root
from .tempnames import TMP_PREFIX, is_leftover, temp_name


def remove_leftovers(folder: Folder, name: str) -> list[str]:
    """Remove the leftovers of earlier writes of ``name`` in ``folder``; the names removed.
    Nothing here fails the write that asked: a folder that cannot be listed, a file gone
    meanwhile, are left as they are."""
    removed: list[str] = []
    try:
        names = folder.listdir()
    except OSError:
        return removed
    for candidate in names:
        if not candidate.startswith(TMP_PREFIX):
            continue
        try:
            st = folder.lstat(candidate)
            if is_leftover(name, candidate, st) and remove_checked(
                    folder, candidate, temp_name(name), st, partial(is_leftover, name, candidate)):
                removed.append(candidate)
        except OSError:
            continue
    return removed


def _same_file(st: os.stat_result) -> tuple[int, ...]:
    """What tells the file looked at from another put under its name: its identity, and its
    size and time of change, which a new file that took a freed inode's number has its own."""
    return (*identity(st), st.st_size, st.st_mtime_ns)


def remove_checked(folder: Folder, candidate: str, private: str, looked: os.stat_result,
                   still_ours: Callable[[os.stat_result], bool]) -> bool:
    """Unlink ``candidate`` only if it is still the file looked at (``looked``, its
    ``lstat``) and ``still_ours`` says so of it. A look then an
    unlink by name deleted a file swapped in under that name between the two (its data
    lost if it had no other name, redteam19; a rewind's ``remove_temps``, trust25): it is
    first moved, in one rename, to ``private``, a name of the caller's own where no one
    else puts a file, and looked at there; not the one looked at (or no longer ours), it
    is renamed back. ``private`` is to be one the caller's next sweep removes once this
    process is gone, if a crash leaves it."""
    ident = _same_file(looked)
    try:
        folder.lstat(private)
    except FileNotFoundError:
        pass
    else:
        return False  # taken (a fresh random name: never in practice): not renamed over
    folder.rename(candidate, private)
    try:
        st = folder.lstat(private)
        mine = _same_file(st) == ident and still_ours(st)
    except OSError:
        mine = False
    if mine:
        folder.unlink(private)
        return True
    try:
        folder.lstat(candidate)
    except FileNotFoundError:
        folder.rename(private, candidate)  # as it was
    # else a third file took the name meanwhile: the one moved stays by our name, whose
    # sweep leaves it unless it is an old file of ours (checked again, as any leftover)
    return False


def remove_leftovers_at(path: Path) -> list[str]:
    """``remove_leftovers`` for a file written by path (``fs/atomic.atomic_write``): its
    folder opened once (a link there is the user's choice), then listed, looked at and
    unlinked through it (``remove_checked``). By path, a folder swapped for a link between
    the look and the unlink made the unlink remove the same-named file where the link
    points (redteam19)."""
    try:
        folder = open_root(str(path.parent))
    except OSError:
        return []
    try:
        return remove_leftovers(folder, path.name)
    finally:
        folder.close()
