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
            if is_leftover(name, candidate, st) and _remove_checked(folder, name, candidate,
                                                                    _same_file(st)):
                removed.append(candidate)
        except OSError:
            continue
    return removed


def _same_file(st: os.stat_result) -> tuple[int, ...]:
    """What tells the file looked at from another put under its name: its identity, and its
    size and time of change, which a new file that took a freed inode's number has its own."""
    return (*identity(st), st.st_size, st.st_mtime_ns)


def _remove_checked(folder: Folder, name: str, candidate: str, ident: tuple[int, ...]) -> bool:
    """Unlink ``candidate`` only if it is still the file looked at (``ident``). A look then
    an unlink by name deleted a file swapped in under that name between the two (its data
    lost if it had no other name, redteam19): it is first moved, in one rename, to a name
    of our own, and looked at there, where no one else puts a file; not the one looked at
    (or no longer a leftover), it is renamed back. That name is one of ours that our next
    write's sweep removes once this process is gone, if a crash leaves it."""
    private = temp_name(name)
    try:
        folder.lstat(private)
    except FileNotFoundError:
        pass
    else:
        return False  # taken (a fresh random name: never in practice): not renamed over
    folder.rename(candidate, private)
    try:
        st = folder.lstat(private)
        mine = _same_file(st) == ident and is_leftover(name, candidate, st)
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
    unlinked through it (``_remove_checked``). By path, a folder swapped for a link between
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
