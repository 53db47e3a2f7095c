"""The system's rename variants, through ``ctypes``: two names of one folder swapped in one
step, ``renameat2(RENAME_EXCHANGE)`` (Linux 3.15+, glibc 2.28+), ``renameatx_np(RENAME_SWAP)``
(macOS 10.12+); and a rename that never replaces, ``RENAME_NOREPLACE`` / ``RENAME_EXCL``.

A rewind's rename of its written file over a path replaced, unseen, a save renamed over
that path between the rewind's last look and its rename: the save was lost
(``Applier._put``, redteam30). A swap puts whatever stood there at the temporary name, where
it is looked at; a rename cannot say what it replaced. Python's ``os`` has no such call.
``ctypes`` costs 3.9-5.2 ms to import, so it is imported on the first swap only (a rewind's),
never on a checkpoint's path. Where there is no swap (Windows, an older kernel or C library,
a file system that refuses it with ``EINVAL``) ``exchange`` says so and the caller renames.

A rewind's create (nothing stood at the path at its look) was a plain rename: a save put at
the path after the look was replaced, its bytes in no checkpoint (trust28).
``rename_no_replace`` fails with ``FileExistsError`` there instead, or says it cannot.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable

# what the C call answered: 0, or the errno it set
_Raw = Callable[[int, bytes, bytes], int]
# the C call with its flag: (dir_fd, a, b, flag) -> 0 or errno
_Call = Callable[[int, bytes, bytes, int], int]

_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_NOREPLACE = 1  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h
_RENAME_EXCL = 4  # macOS sys/stdio.h
_SWAP, _EXCL = ((_RENAME_EXCHANGE, _RENAME_NOREPLACE) if sys.platform == "linux"
                else (_RENAME_SWAP, _RENAME_EXCL))

# answers that mean "no swap here", not "this swap failed": the caller renames instead
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})

_loaded: list[_Call | None] = []  # the call, once looked up (None: the system has none)


def _load() -> _Call | None:
    """The system's rename call taking flags, or None. Imports ``ctypes`` (the first swap
    or create only)."""
    if sys.platform not in ("linux", "darwin"):
        return None
    import ctypes  # here, not at the top: 3.9-5.2 ms a checkpoint's process must not pay

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "renameat2" if sys.platform == "linux" else "renameatx_np", None)
    if fn is None:
        return None  # glibc before 2.28, musl before 1.2.2, macOS before 10.12
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int

    def call(dir_fd: int, a: bytes, b: bytes, flag: int) -> int:
        if fn(dir_fd, a, dir_fd, b, flag) == 0:
            return 0
        return ctypes.get_errno()

    return call


def _flagged(dir_fd: int, a: bytes, b: bytes, flag: int) -> int:
    if not _loaded:
        _loaded.append(_load())
    call = _loaded[0]
    if call is None:
        return errno.ENOSYS
    err = call(dir_fd, a, b, flag)
    if err == errno.EPERM and _filtered(call, dir_fd):
        _loaded[0] = None  # the process's filter: no such call for the rest of its life
        return errno.ENOSYS
    return err


def _filtered(call: _Call, dir_fd: int) -> bool:
    """Whether ``EPERM`` came from a filter refusing the call itself (seccomp: systemd-nspawn,
    a container runtime's older default), not from this rename (a sticky folder, an
    immutable file): the call asked again with no names and no flag, which the kernel
    answers ``ENOENT``; a filter answers ``EPERM`` again. Raised, that ``EPERM`` failed
    every rewind that created or replaced a file (redteam36)."""
    return call(dir_fd, b"", b"", 0) == errno.EPERM


def _raw(dir_fd: int, a: bytes, b: bytes) -> int:
    """Swap ``a`` and ``b`` in the folder ``dir_fd``: 0, or the errno (``ENOSYS``: no call)."""
    return _flagged(dir_fd, a, b, _SWAP)


def _raw_excl(dir_fd: int, a: bytes, b: bytes) -> int:
    """Rename ``a`` to ``b`` in ``dir_fd`` unless ``b`` exists: 0, or the errno (``EEXIST``:
    something stands at ``b``; ``ENOSYS``: no call)."""
    return _flagged(dir_fd, a, b, _EXCL)


def _names(a: str, b: str) -> tuple[bytes, bytes]:
    raw_a, raw_b = os.fsencode(a), os.fsencode(b)
    if b"\0" in raw_a or b"\0" in raw_b:
        # a C string ends at its first NUL: "b\0c" would name ``b`` (os's calls refuse it)
        raise ValueError(f"embedded null byte in a name to rename: {a!r}, {b!r}")
    return raw_a, raw_b


def exchange(dir_fd: int, folder: str, a: str, b: str) -> bool:
    """Swap the names ``a`` and ``b`` in the folder open as ``dir_fd`` (its path ``folder``,
    for errors), whatever each names (a file, a link, a folder). True once swapped; False
    where this system or file system has no swap (the caller renames instead). Any other
    failure (``ENOENT``: one of the two is gone) raises ``OSError`` naming both."""
    return _answer(_raw(dir_fd, *_names(a, b)), folder, a, b)


def rename_no_replace(dir_fd: int, folder: str, a: str, b: str) -> bool:
    """Rename ``a`` to ``b`` in the folder open as ``dir_fd`` (its path ``folder``, for
    errors) only if nothing stands at ``b``, not even a dangling link. True once renamed;
    False where this system or file system has no such rename (the caller falls back).
    ``FileExistsError`` where something stands at ``b``: it is left as it was, and ``a``
    too; any other failure raises ``OSError`` naming both."""
    return _answer(_raw_excl(dir_fd, *_names(a, b)), folder, a, b)


def _answer(err: int, folder: str, a: str, b: str) -> bool:
    if err == 0:
        return True
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), os.path.join(folder, a), None,
                  os.path.join(folder, b))
