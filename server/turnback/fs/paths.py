"""Workspace-relative paths: validation, and file-system access that cannot escape.

Every write of a rewind goes through a folder descriptor opened component by
component with ``O_NOFOLLOW``, so a symlink — even one swapped in while the
rewind runs — can never redirect a write outside the workspace.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..errors import InvalidInput, Unsafe

MAX_NAME = 255


def display(rel: str) -> str:
    """A path for people and JSON results: undecodable bytes shown as U+FFFD."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# C0 controls, DEL and C1 controls (U+009B is a terminal's CSI): one could end a line
# early, move the cursor or recolour what follows, making one name look like others
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_QUOTE = re.compile('[\x00-\x1f\x7f-\x9f"\\\\]')
_ESC = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
        "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _ESC.get(c) or "".join(f"\\{b:03o}" for b in c.encode("utf-8"))


def quote(rel: str) -> str:
    """A path for a line of text output, as git's ``core.quotePath`` prints it: a name
    holding a control character, ``"`` or ``\\`` in double quotes, C-escaped
    (``"a\\nb"``); others as they are. JSON output needs none of this (already escaped)."""
    text = display(rel)
    if _QUOTE.search(text) is None:
        return text
    return '"' + _QUOTE.sub(_escape, text) + '"'


def one_line(text: str) -> str:
    """Free text (a label, a message naming a path) for one line of output: control
    characters C-escaped, so it can neither end the line nor drive the terminal."""
    text = display(text)
    return text if _CONTROL.search(text) is None else _CONTROL.sub(_escape, text)


def expand_home(path: str | os.PathLike[str]) -> Path:
    """``~`` and ``~user`` expanded where they can be; otherwise the path as given.

    ``Path.expanduser`` raises for an unknown user (``~nobody-here/x``) or a
    missing home; such a path then simply names a folder called ``~...``, and
    whatever uses it reports it as not found instead of failing unexpectedly.
    """
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)


def normalize(path: object, what: str = "path") -> str:
    """A user-supplied relative path as ``a/b/c``; refuse anything that could escape."""
    if not isinstance(path, str) or not path:
        raise InvalidInput(f"{what} must be a non-empty string")
    if "\0" in path:
        raise Unsafe(f"{what} {path!r} contains a NUL byte")
    if "\\" in path:
        raise Unsafe(f"{what} {path!r} contains a backslash; use '/' between folders")
    if path.startswith("/"):
        raise Unsafe(f"{what} {path!r} is absolute; give a path relative to the workspace")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise InvalidInput(f"{what} {path!r} names the workspace itself, not a file in it")
    for p in parts:
        if p == "..":
            raise Unsafe(f"{what} {path!r} is outside the workspace ('..')")
        if len(os.fsencode(p)) > MAX_NAME:
            raise InvalidInput(f"{what} {path!r} has a name longer than {MAX_NAME} bytes")
    return "/".join(parts)


class NotAFolder(Unsafe):
    """A component of the path is a file (not a symlink): nothing can stand below it."""


def open_dir(root_fd: int, parts: list[str], *, create: bool) -> int:
    """Open folder ``parts`` under ``root_fd`` without following any symlink.

    Returns a new descriptor (caller closes). ``create`` makes missing folders.
    """
    for name in parts:
        if name in ("", ".", "..") or "/" in name or "\0" in name:
            raise Unsafe(f"'{'/'.join(parts)}' is not a plain path inside the workspace")
    fd = os.dup(root_fd)
    try:
        for i, name in enumerate(parts):
            try:
                nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except (NotADirectoryError, OSError) as exc:
                if isinstance(exc, NotADirectoryError) or exc.errno == 40:  # ELOOP: a symlink
                    try:
                        st = os.lstat(name, dir_fd=fd)
                        what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a folder"
                    except OSError:
                        what = "being replaced while Turnback opens it"  # a race: refuse too
                    error = NotAFolder if what == "not a folder" else Unsafe
                    raise error(
                        f"'{'/'.join(parts[: i + 1])}' is {what}; refusing to write through it"
                    ) from None
                raise
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise
