"""Open what agents wrote without being led elsewhere: regular files only, no links, bounded.

An agent's folder (``~/.claude``, ``~/.codex``) or a path a client names may hold
a symlink to ``~/.ssh/id_ed25519`` (whose bytes a rewind would then write into
the workspace), a FIFO that blocks a read forever, or ``/dev/zero`` that never
ends. Every importer opens its inputs here, so one place decides:

- the file is opened with ``O_NOFOLLOW | O_NONBLOCK`` (Windows: see ``fs/folders.py``),
  ``fstat``-ed: a link, FIFO, device, socket or folder is refused at once with
  :class:`Unsafe`;
- folder walks (:func:`find`) never descend into a linked folder and report
  what they pass over;
- nothing is read whole beyond :func:`max_line` bytes (``TURNBACK_MAX_LINE``).

A link *above* the folder Turnback starts from (``~/.claude`` itself kept in a
dotfiles repository) is the user's own set-up and is followed; links below it
are the agent folder's content and are not.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import BinaryIO

from ..errors import InvalidInput, Unsafe
from ..fs.folders import Folder, is_link, open_root
from ..fs.osflags import O_BINARY, O_CLOEXEC, O_NONBLOCK
from ..models import Problem

MAX_LINE_ENV = "TURNBACK_MAX_LINE"
DEFAULT_MAX_LINE = 64 << 20  # real transcripts' longest lines are a few MiB
MIN_MAX_LINE = 1024

_OPEN_FLAGS = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY  # never a last link: Folder.open
_SIZE_RE = re.compile(r"(\d+)\s*([KMG]?)(?:i?B)?", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def max_line(env: Mapping[str, str]) -> int:
    """The most bytes an importer holds for one record (a line, a document, a backup)."""
    raw = env.get(MAX_LINE_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_LINE
    m = _SIZE_RE.fullmatch(raw)
    value = int(m.group(1)) * _UNITS[m.group(2).upper()] if m else 0
    if value < MIN_MAX_LINE:
        raise InvalidInput(
            f"{MAX_LINE_ENV}={raw!r} is not a size of at least {MIN_MAX_LINE} bytes; "
            "give bytes or K/M/G, e.g. 64M"
        )
    return value


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n:,} bytes"


def kind_of(mode: int) -> str:
    """What a file is, in words, for refusals."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def refusal(path: Path, what: str) -> Unsafe:
    """The error for a non-regular input: names it, what it is, and what to do."""
    if what == "a symbolic link":
        try:
            target = f" to {os.readlink(path)!r}"
        except OSError:
            target = ""
        return Unsafe(
            f"{path} is a symbolic link{target}; Turnback reads agents' files only "
            "directly, never through a link (a link could lead to a secret outside the "
            "workspace). If you trust its target, give that path instead"
        )
    return Unsafe(
        f"{path} is {what}, not a regular file; Turnback imports only regular files "
        "(give the transcript file itself)"
    )


def _open_parent(path: Path, under: Path | None) -> Folder:
    """``path``'s folder; below ``under``, reached without following links
    (``fs/folders.py``: descriptors on POSIX, checked paths on Windows)."""
    if under is None:
        return open_root(str(path.parent))
    parts = path.parent.relative_to(under).parts
    here = open_root(str(under))
    try:
        for i, name in enumerate(parts):
            try:
                nxt = here.child(name)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                folder = under.joinpath(*parts[: i + 1])
                try:
                    st = here.lstat(name)
                    what = "a symbolic link" if is_link(st) else kind_of(st.st_mode)
                except OSError:
                    what = "being replaced while Turnback opens it"
                raise refusal(folder, what) from None
            here.close()
            here = nxt
        return here
    except BaseException:
        here.close()
        raise


def open_regular(path: Path, under: Path | None = None) -> BinaryIO:
    """``path`` opened for reading if it is a regular file reached without a link.

    ``under``: a folder above ``path`` from which on no folder may be a link either
    (a file-history folder swapped for a link to ``~/.ssh``). Raises :class:`Unsafe`
    at once for anything else; OSError when the file cannot be opened at all.
    """
    with _open_parent(path, under) as dfd:
        # lstat first: a device is never even opened (opening some has effects).
        st = dfd.lstat(path.name)
        if is_link(st):
            raise refusal(path, "a symbolic link")
        if not stat.S_ISREG(st.st_mode):
            raise refusal(path, kind_of(st.st_mode))
        try:
            # O_NONBLOCK: a FIFO swapped in since the lstat must not block the open.
            fd = dfd.open(path.name, _OPEN_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # became a link since the lstat
                raise refusal(path, "a symbolic link") from None
            raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise refusal(path, kind_of(st.st_mode))
        if O_NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def too_large(path: Path, size: int | None, limit: int) -> InvalidInput:
    have = f"{size:,} bytes" if size is not None else "more than that"
    return InvalidInput(
        f"{path} holds {have}, over the {size_text(limit)} an importer reads at once; "
        f"set {MAX_LINE_ENV} (e.g. {MAX_LINE_ENV}=256M) to read it"
    )


def read_regular(path: Path, limit: int, under: Path | None = None) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes (see :func:`open_regular`)."""
    with open_regular(path, under) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise too_large(path, size, limit)
        data = f.read(limit + 1)  # it may have grown since the fstat
    if len(data) > limit:
        raise too_large(path, None, limit)
    return data


def in_workspace(workspace: Path, rel: str | Path) -> Path | None:
    """``workspace/rel`` if it is a regular file reached without a link from the workspace
    on, else None. An agent's own file in the workspace (``.crush/crush.db``) is found by
    itself: a cloned repository's ``.crush`` linked to another project's would otherwise
    have that project's sessions imported here (and pushed with this workspace's history)."""
    path = workspace / rel
    try:
        open_regular(path, under=workspace).close()
    except (OSError, Unsafe):
        return None
    return path


def check_named(path: Path) -> None:
    """Refuse a path a person or client named if it is a link or not a regular file/folder.

    Named paths are refused outright (an error, nothing imported); what a walk of
    a folder passes over is only reported (see :func:`find`).
    """
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        return
    open_regular(path).close()


def find(root: Path, *pattern: str, refused: list[Problem] | None = None) -> list[Path]:
    """Regular files under ``root`` matching ``pattern``, one name pattern per level.

    ``**`` matches any number of folders. Links (to files or folders), FIFOs and
    devices are never returned nor walked into; those whose name matches are added
    to ``refused``. A missing or unreadable ``root`` holds nothing.
    """
    out: list[Path] = []
    _find(root, pattern, out, refused if refused is not None else [])
    return sorted(out)


def _find(folder: Path, pattern: tuple[str, ...], out: list[Path], refused: list[Problem]) -> None:
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        _find(folder, rest, out, refused)
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                _find(Path(e.path), pattern, out, refused)
            elif e.is_symlink() and _is_dir(e):
                refused.append(_skipped(Path(e.path), "a symbolic link to a folder"))
        return
    for e in entries:
        if not fnmatchcase(e.name, head):
            continue
        path = Path(e.path)
        if rest:
            if e.is_dir(follow_symlinks=False):
                _find(path, rest, out, refused)
            elif e.is_symlink():
                refused.append(_skipped(path, "a symbolic link"))
        elif e.is_file(follow_symlinks=False):
            out.append(path)
        elif not e.is_dir(follow_symlinks=False):
            try:
                what = kind_of(e.stat(follow_symlinks=False).st_mode)
            except OSError:
                continue
            refused.append(_skipped(path, what))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _skipped(path: Path, what: str) -> Problem:
    return Problem(str(path), 0, f"skipped: it is {what}, not a regular file "
                                 "(Turnback does not follow links in agents' folders)")
