"""Names Windows cannot hold, named before a rewind touches anything.

A checkpoint made on Linux or macOS can hold ``aux.c``, ``notes.`` or ``a:b``: on
Windows each either fails half-way through a rewind or, worse, opens something else
(``CON`` is the console, ``x.txt:s`` a stream of ``x.txt``, ``name.`` is ``name``).
``problem`` says what is wrong with one path there; the store refuses the rewind
before any file changes, naming the file and how to get it (``turnback show``).
Paths longer than ``MAX_PATH`` (260) fail unless the machine enabled long paths:
refused too, saying so. Executable bits do not exist there: a file is restored
without one (not an error).
"""

from __future__ import annotations

import re

MAX_PATH = 260
# CON, PRN, AUX, NUL, COM0-9, LPT0-9 (and the superscript digits Windows also takes),
# with or without an extension, in any case, trailing spaces before the dot too
_DIGIT = "[0-9\u00b9\u00b2\u00b3]"
_RESERVED = re.compile(rf"(?i)(con|prn|aux|nul|com{_DIGIT}|lpt{_DIGIT}) *(\..*)?")
_BAD_CHARS = re.compile(r'[<>:"|?*\\\x00-\x1f]')


def problem(rel: str, workspace: str) -> str | None:
    """Why Windows cannot hold ``rel`` (a workspace-relative ``/`` path), or None."""
    for name in rel.split("/"):
        if _RESERVED.fullmatch(name):
            return f"'{name}' is a device name on Windows (CON, PRN, AUX, NUL, COM1, LPT1, …)"
        if name.endswith((".", " ")):
            return f"'{name}' ends with a dot or a space, which Windows drops from a name"
        bad = _BAD_CHARS.search(name)
        if bad:
            return f"'{name}' holds {bad.group()!r}, which Windows does not allow in a name"
    full = len(workspace) + 1 + len(rel)
    if full >= MAX_PATH:
        return (f"its full path is {full} characters, over Windows' {MAX_PATH} (enable long "
                "paths: LongPathsEnabled)")
    return None
