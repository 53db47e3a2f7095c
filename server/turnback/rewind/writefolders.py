"""The folders a rewind's writes go into, each opened once for the whole apply.

``open_dir`` from the workspace's root opens every folder on a path's way: a rewind of
10 files in SPEC's workspace made ~50 ``openat`` and as many ``close`` (bench/RESULTS.md,
``hot33``, ``rewind34``), most of them the same top folders again. Here each folder on the
way is opened once, by its parent's descriptor, and held until ``close``; a path's folder
is reached from the deepest one already held. A descriptor held is the same guarantee as
one opened afresh: nothing renamed or linked since makes a call through it reach another
folder (``fs/folders.py``), and each step below it is opened without following a link.

A held folder may have been moved since it was opened (renamed in the workspace, moved out
of it, swapped for a link, or a folder above it so): its descriptor would still reach it,
and the rewind's later files of that folder would go where it now is. So before a held
folder serves another path, each folder on the way is looked at by name in its held parent
(one ``lstat`` a level, not an ``openat`` and a ``close``): one that is no longer the
folder held there is dropped, with those below it, and opened afresh, as every path was
before (``redteam46``): missing, the write's look finds nothing and the rewind stops.

Only where folders are descriptors (``FdFolder``). Reached by path (Windows), a held
folder would be a path looked at once: a junction swapped in above it since would be
followed by the next child's path, so every path is walked from the root as before.
Folders missing (to be made by the write) are not remembered: the next look opens again.
"""

from __future__ import annotations

import os
import stat

from ..errors import Unsafe
from ..fs.folders import FdFolder, Folder, NotAFolder, identity, is_link, open_dir

# the most descriptors held at once: a rewind of thousands of folders closes them all and
# starts again (paths come sorted, so the ones it needs next are mostly reopened anyway)
MAX_HELD = 128


class WriteFolders:
    """Folders below ``root`` (which the caller keeps and closes), opened on demand and
    held until ``close``. A folder returned is valid until the next ``get`` or ``close``:
    the caller neither closes nor keeps it (``os.dup`` it to keep it longer)."""

    def __init__(self, root: Folder) -> None:
        self._root = root
        self._held: dict[tuple[str, ...], Folder] = {(): root}
        # a held folder's identity (its descriptor's ``fstat``), taken the first time it
        # serves again: what its name must still lead to (most are never reused)
        self._ids: dict[tuple[str, ...], tuple[int, int]] = {}
        self._shares = isinstance(root, FdFolder)
        self._fresh: Folder | None = None  # the one folder opened by path, closed next

    def get(self, parts: list[str]) -> Folder | None:
        """The folder ``parts`` (a path's folders, the workspace's root for none), open;
        None where it (or a folder on its way) is not there, or a file stands on the
        way. A link on the way raises ``Unsafe`` (``open_dir``)."""
        self._close_fresh()
        if not self._shares:
            try:
                self._fresh = open_dir(self._root, parts, create=False)
            except (FileNotFoundError, NotADirectoryError, NotAFolder):
                return None
            return self._fresh
        key = tuple(parts)
        if len(self._held) > MAX_HELD:
            self._release()
        depth = len(key)
        while key[:depth] not in self._held:
            depth -= 1
        depth = self._still_there(key, depth)
        here = self._held[key[:depth]]
        for i in range(depth, len(key)):
            try:
                here = open_dir(here, [key[i]], create=False)
            except (FileNotFoundError, NotADirectoryError, NotAFolder):
                return None
            except Unsafe:
                self._named_refusal(key[: i + 1])
                raise
            self._held[key[: i + 1]] = here
        return here

    def _named_refusal(self, key: tuple[str, ...]) -> None:
        """Raise the refusal of folder ``key`` from the root: through its held parent it
        named only its last name (``'e' is a symlink``), from the root it names the path
        (``'d/e'``) as before; nothing raised (the link gone since), the caller's stands."""
        try:
            open_dir(self._root, list(key), create=False).close()
        except Unsafe:
            raise
        except (OSError, NotAFolder):
            pass

    def _still_there(self, key: tuple[str, ...], depth: int) -> int:
        """How many of ``key``'s first ``depth`` folders (all held) are still the folders
        held at their names; the first that is not is dropped, with every held folder
        below it, to be opened afresh."""
        for i in range(1, depth + 1):
            try:
                st: os.stat_result | None = self._held[key[: i - 1]].lstat(key[i - 1])
            except OSError:
                st = None
            if (st is None or is_link(st) or not stat.S_ISDIR(st.st_mode)
                    or identity(st) != self._identity(key[:i])):
                self._drop(key[:i])
                return i - 1
        return depth

    def _identity(self, key: tuple[str, ...]) -> tuple[int, int]:
        known = self._ids.get(key)
        if known is None:
            known = self._ids[key] = identity(self._held[key].stat_self())
        return known

    def _drop(self, top: tuple[str, ...]) -> None:
        """Close and forget the held folder ``top`` and those below it."""
        for key in [k for k in self._held if k[: len(top)] == top]:
            self._held.pop(key).close()
            self._ids.pop(key, None)

    def _close_fresh(self) -> None:
        fresh, self._fresh = self._fresh, None
        if fresh is not None:
            fresh.close()

    def _release(self) -> None:
        for key, folder in list(self._held.items()):
            if key:
                folder.close()
        self._held = {(): self._root}
        self._ids = {}

    def close(self) -> None:
        self._close_fresh()
        self._release()

    def __enter__(self) -> WriteFolders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
