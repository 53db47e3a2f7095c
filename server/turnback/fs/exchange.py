"""Two names of one folder swapped in one step: ``renameat2(RENAME_EXCHANGE)`` (Linux 3.15+,
glibc 2.28+), ``renameatx_np(RENAME_SWAP)`` (macOS 10.12+), through ``ctypes``.

A rewind's rename of its written file over a path replaced, unseen, a save renamed over
that path between the rewind's last look and its rename: the save was lost
(``Applier._put``, redteam30). A swap puts whatever stood there at the temporary name, where
it is looked at; a rename cannot say what it replaced. Python's ``os`` has no such call.
``ctypes`` costs 3.9-5.2 ms to import, so it is imported on the first swap only (a rewind's),
never on a checkpoint's path. Where there is no swap (Windows, an older kernel or C library,
a file system that refuses it with ``EINVAL``) ``exchange`` says so and the caller renames.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

# what the C call answered: 0, or the errno it set
_Raw = Callable[[int, bytes, bytes], int]

_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h

# answers that mean "no swap here", not "this swap failed": the caller renames instead
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})

_loaded: list[_Raw | None] = []  # the call, once looked up (None: the system has none)


def _load() -> _Raw | None:
    """The system's swap call, or None. Imports ``ctypes`` (the first swap only)."""
    if sys.platform not in ("linux", "darwin"):
        return None
    import ctypes  # here, not at the top: 3.9-5.2 ms a checkpoint's process must not pay

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    name, flag = (("renameat2", _RENAME_EXCHANGE) if sys.platform == "linux"
                  else ("renameatx_np", _RENAME_SWAP))
    fn = getattr(libc, name, None)
    if fn is None:
        return None  # glibc before 2.28, musl before 1.2.2, macOS before 10.12
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int

    def raw(dir_fd: int, a: bytes, b: bytes) -> int:
        if fn(dir_fd, a, dir_fd, b, flag) == 0:
            return 0
        return ctypes.get_errno()

    return raw


def _raw(dir_fd: int, a: bytes, b: bytes) -> int:
    """Swap ``a`` and ``b`` in the folder ``dir_fd``: 0, or the errno (``ENOSYS``: no call)."""
    if not _loaded:
        _loaded.append(_load())
    call = _loaded[0]
    return errno.ENOSYS if call is None else call(dir_fd, a, b)


def exchange(dir_fd: int, folder: str, a: str, b: str) -> bool:
    """Swap the names ``a`` and ``b`` in the folder open as ``dir_fd`` (its path ``folder``,
    for errors), whatever each names (a file, a link, a folder). True once swapped; False
    where this system or file system has no swap (the caller renames instead). Any other
    failure (``ENOENT``: one of the two is gone) raises ``OSError`` naming both."""
    raw_a, raw_b = os.fsencode(a), os.fsencode(b)
    if b"\0" in raw_a or b"\0" in raw_b:
        # a C string ends at its first NUL: "b\0c" would swap ``b`` (os's calls refuse it)
        raise ValueError(f"embedded null byte in a name to swap: {a!r}, {b!r}")
    err = _raw(dir_fd, raw_a, raw_b)
    if err == 0:
        return True
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), os.path.join(folder, a), None,
                  os.path.join(folder, b))
