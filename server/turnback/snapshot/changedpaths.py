"""The changed paths a scan is told of (``Scanner.scan``'s ``dirty``), spelled as its trees
spell them.

A scan around changed paths looks at each by its name: ``./f``, ``a//f``, ``a/./f`` or ``d/``
named a file its tree already held under its clean name, so one file had two names in the
checkpoint (probed through ``Store.checkpoint(dirty=...)``, trust24's "left open"). The
watcher and the store's own rewinds give clean names; an API caller may not. Clean names
cost a few substring tests each; others are split and joined (bench/RESULTS.md, trust25).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..errors import InvalidInput

# where ``\`` parts a path (Windows): the scan looks a changed path up by path there, so
# ``a\..\..\f`` climbed out of the workspace, passing the ``/`` test (redteam27); elsewhere
# it is a character of a name, which a watcher reports as such
BACKSLASH_PARTS = os.sep == "\\"


def changed_paths(dirty: Iterable[str]) -> set[str] | None:
    """``dirty`` as relative paths ``a/b``; None if one names the workspace itself (``""``,
    ``.``: every path is in question, a walk). A path that climbs (``..``) or holds a NUL
    is refused, naming it: the scan never looks outside the workspace."""
    out: set[str] = set()
    for path in dirty:
        # what an unclean name holds (an empty, ``.`` or ``..`` part, a NUL), tested by
        # substrings (C loops); a name of a hidden file or folder is looked at closer
        if (not path or "//" in path or "/." in path or "\0" in path or path[0] in "./"
                or path[-1] == "/"):
            parts = [part for part in path.split("/") if part not in ("", ".")]
            if ".." in parts or "\0" in path:
                raise InvalidInput(
                    f"changed path {path!r} leaves its folder ('..') or holds a NUL byte; "
                    "name the file relative to the workspace, as a/b.txt")
            if not parts:
                return None
            path = "/".join(parts)
        if BACKSLASH_PARTS and "\\" in path:
            raise InvalidInput(
                f"changed path {path!r} holds a backslash; name the file relative to the "
                "workspace with '/' between folders, as a/b.txt")
        out.add(path)
    return out
