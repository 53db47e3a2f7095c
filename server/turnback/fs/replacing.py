"""A file replaced whole through a folder reached without following a link (``Folder``).

One mechanism for the files Turnback rewrites in folders that anyone may change under it:
the store's own files and caches written while a server runs for hours (``fs/atomic.py``
through ``fs/instore.py``'s folders), pack indexes, and the agents' hook settings in the
workspace (``importers/hooks.py``). A temporary file is made beside the name (``O_EXCL``:
nothing planted is opened), filled, and renamed over the name: a link, a FIFO or another's
file planted there is replaced, never written into, and a reader sees the old content or the
new. ``rewind/apply.py`` copies a blob into place with its own checks of what it replaces.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress

from .folders import Folder, chmod_fd
from .osflags import O_BINARY, O_CLOEXEC
from .privacy import FILE_MODE
from .tempnames import temp_name


def replace_file(folder: Folder, name: str, data: bytes, *, mode: int | None = FILE_MODE,
                 fsync: bool = False) -> None:
    """``name`` in ``folder`` holds ``data``, all or nothing.

    ``mode``: the file's permission bits, exactly (the umask not applied: a file of the
    user's keeps its own, setuid and sticky bits included); the content is written while
    the file is 0600 at most. None: what the umask leaves of 0666, as an editor makes a new
    file. ``fsync``: the content is durable before the name points to it."""
    def write(fd: int) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)

    write_over(folder, name, os.O_WRONLY, 0o666 if mode is None else FILE_MODE, write,
               exact_mode=mode)


def write_over(folder: Folder, name: str, flags: int, mode: int, write: Callable[[int], None],
               *, exact_mode: int | None = None, keep_open: bool = False) -> int | None:
    """Replace ``name`` in ``folder`` by a new file that ``write(fd)`` fills: made under a
    temporary name beside it (``flags`` | create, exclusive; ``mode``, less the umask), then
    renamed over ``name``. The temporary file is removed on every failure.

    ``exact_mode``: set on the new file before ``write`` (the umask not applied).
    ``keep_open``: the descriptor is returned, open (the caller closes it); otherwise it is
    closed before the rename (Windows' C runtime opens a file without the delete sharing a
    rename of it asks for: read, not tried on Windows)."""
    tmp = temp_name(name)
    fd = folder.open(tmp, flags | os.O_CREAT | os.O_EXCL | O_BINARY | O_CLOEXEC, mode)
    closed = False
    try:
        if exact_mode is not None:  # whatever the umask (the store's 0600 too)
            chmod_fd(fd, os.path.join(folder.path, tmp), exact_mode)
        write(fd)
        if not keep_open:
            closed = True
            os.close(fd)
        folder.rename(tmp, name)
    except BaseException:
        if not closed:
            os.close(fd)
        with suppress(OSError):
            folder.unlink(tmp)
        raise
    return fd if keep_open else None
