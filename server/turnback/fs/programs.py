"""Finding a program on ``PATH`` without looking in the working folder.

The language server runs in the workspace folder, which may be a stranger's repository.
``shutil.which`` and a bare name given to ``subprocess`` look there: on Windows first of all
(``shutil.which`` puts the current folder ahead of ``PATH``; ``CreateProcess`` searches it
too), and everywhere when ``PATH`` holds an empty or relative entry (``shutil.which`` then
answers a relative ``git``). So a repository's own ``git`` ran at Push History (redteam24).
Only absolute entries are searched here, and the answer is an absolute path, which
``subprocess`` runs without any search of its own.
"""

from __future__ import annotations

import os


def find_program(name: str, path: str | None = None) -> str | None:
    """The absolute path of the executable ``name`` in ``path`` (default: ``PATH``), or None."""
    search = os.environ.get("PATH", os.defpath) if path is None else path
    exts = [""]
    if os.name == "nt":
        pathext = os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(os.pathsep)
        has_ext = any(name.lower().endswith(e.lower()) for e in pathext if e)
        exts = [""] if has_ext else [e for e in pathext if e]
    for folder in search.split(os.pathsep):
        folder = folder.strip('"')
        if not os.path.isabs(folder):
            continue  # '' and '.' mean the working folder: the workspace
        for ext in exts:
            candidate = os.path.join(folder, name + ext)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None
