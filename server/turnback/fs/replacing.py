"""A file replaced whole through a folder reached without following a link (``Folder``).

One mechanism for the files Turnback rewrites in folders that anyone may change under it:
the store's caches written while a server runs for hours (``fs/instore.py``) and the
agents' hook settings in the workspace (``importers/hooks.py``). A temporary file is made
beside the name (``O_EXCL``: nothing planted is opened), filled, and renamed over the name:
a link, a FIFO or another's file planted there is replaced, never written into, and a
reader sees the old content or the new. ``fs/atomic.py`` does the same by path for the
store's own files (missing folders made, a descriptor kept open, syncs grouped);
``rewind/apply.py`` copies a blob into place with its own checks of what it replaces.
"""

from __future__ import annotations

import os
from contextlib import suppress

from .atomic import TMP_PREFIX
from .folders import Folder, chmod_fd
from .osflags import O_BINARY, O_CLOEXEC
from .privacy import FILE_MODE


def replace_file(folder: Folder, name: str, data: bytes, *, mode: int | None = FILE_MODE,
                 fsync: bool = False) -> None:
    """``name`` in ``folder`` holds ``data``, all or nothing.

    ``mode``: the file's permission bits, exactly (the umask not applied: a file of the
    user's keeps its own, setuid and sticky bits included); the content is written while
    the file is 0600 at most. None: what the umask leaves of 0666, as an editor makes a new
    file. ``fsync``: the content is durable before the name points to it."""
    tmp = f"{TMP_PREFIX}{name}.{os.getpid()}.{os.urandom(4).hex()}"
    fd = folder.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY | O_CLOEXEC,
                     0o666 if mode is None else FILE_MODE)
    try:
        try:
            if mode is not None:  # exactly, whatever the umask (the store's 0600 too)
                chmod_fd(fd, os.path.join(folder.path, tmp), mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        folder.rename(tmp, name)
    except BaseException:
        with suppress(OSError):
            folder.unlink(tmp)
        raise
