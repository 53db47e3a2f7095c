"""``os.walk`` as a loop. Python 3.10 and 3.11's ``os.walk`` recurses a frame a folder, so a
chain of ~1,000 nested folders (one ``mkdir -p``, in the workspace or planted in the store
folder) failed the rewind's, ``status``'s and gc's walks with ``RecursionError``."""

from __future__ import annotations

import os
from collections.abc import Iterator


def walk(top: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)``'s answers, top-down, in a loop: ``(folder, subfolders, files)``;
    subfolders removed from the list in place are not entered; links are not followed (a
    link to a folder is among the subfolders, as there, and not entered); a folder that
    cannot be listed is passed over, as ``os.walk`` does without ``onerror``."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        dirs.append(entry.name)
                        try:
                            if entry.is_symlink():
                                links.add(entry.name)
                        except OSError:
                            links.add(entry.name)
                    else:
                        files.append(entry.name)
        except OSError:
            continue
        yield folder, dirs, files
        # in reverse onto the stack: entered in the listing's order, as ``os.walk`` does
        stack.extend(os.path.join(folder, name) for name in reversed(dirs)
                     if name not in links)
