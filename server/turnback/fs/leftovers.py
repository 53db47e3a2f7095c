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

from pathlib import Path

from .folders import Folder, open_root
from .tempnames import TMP_PREFIX, is_leftover


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
            if is_leftover(name, candidate, folder.lstat(candidate)):
                folder.unlink(candidate)
                removed.append(candidate)
        except OSError:
            continue
    return removed


def remove_leftovers_at(path: Path) -> list[str]:
    """``remove_leftovers`` for a file written by path (``fs/atomic.atomic_write``): its
    folder opened once (a link there is the user's choice), then listed, looked at and
    unlinked through it. By path, a folder swapped for a link between the look and the
    unlink made the unlink remove the same-named file where the link points (redteam19)."""
    try:
        folder = open_root(str(path.parent))
    except OSError:
        return []
    try:
        return remove_leftovers(folder, path.name)
    finally:
        folder.close()
