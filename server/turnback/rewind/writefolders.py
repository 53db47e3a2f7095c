"""The folders a rewind's writes go into, each opened once for the whole apply.

``open_dir`` from the workspace's root opens every folder on a path's way: a rewind of
10 files in SPEC's workspace made ~50 ``openat`` and as many ``close`` (bench/RESULTS.md,
``hot33``, ``rewind34``), most of them the same top folders again. Here each folder on the
way is opened once, by its parent's descriptor, and held until ``close``; a path's folder
is reached from the deepest one already held. A descriptor held is the same guarantee as
one opened afresh: nothing renamed or linked since makes a call through it reach another
folder (``fs/folders.py``), and each step below it is opened without following a link.

Only where folders are descriptors (``FdFolder``). Reached by path (Windows), a held
folder would be a path looked at once: a junction swapped in above it since would be
followed by the next child's path, so every path is walked from the root as before.
Folders missing (to be made by the write) are not remembered: the next look opens again.
"""

from __future__ import annotations

from ..fs.folders import FdFolder, Folder, NotAFolder, open_dir

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
        held = self._held.get(key)
        if held is not None:
            return held
        if len(self._held) > MAX_HELD:
            self._release()
        depth = len(key)
        while key[:depth] not in self._held:
            depth -= 1
        here = self._held[key[:depth]]
        for i in range(depth, len(key)):
            try:
                here = open_dir(here, [key[i]], create=False)
            except (FileNotFoundError, NotADirectoryError, NotAFolder):
                return None
            self._held[key[: i + 1]] = here
        return here

    def _close_fresh(self) -> None:
        fresh, self._fresh = self._fresh, None
        if fresh is not None:
            fresh.close()

    def _release(self) -> None:
        for key, folder in list(self._held.items()):
            if key:
                folder.close()
        self._held = {(): self._root}

    def close(self) -> None:
        self._close_fresh()
        self._release()

    def __enter__(self) -> WriteFolders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
