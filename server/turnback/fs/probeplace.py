"""Where ``fs/hardlinks``' probe makes its files: an open store's root on the same device.

The probe asks whether a device makes hard links with two empty files of its own. Made in
the folder of the put back that asked, a process killed between their ``open`` and their
``unlink`` left an empty ``.turnback-tmp-…`` there, which only a later rewind's or
recovery's clean-up of that folder removed (trust30): in a folder no later plan touches it
stayed for good (trust31's open item). The answer is a device's, so any folder of that
device answers the same question; the store's root is one every open can list without
looking among the user's files. So the probe goes there when an open store's root is on
the asking folder's device (``place``), and each open of a store removes the probe files
there whose writer is gone (``sweep``). A probe on another device (a ``--store`` store
elsewhere, a folder of the workspace on a mount of its own) is made where it was.
"""

from __future__ import annotations

import os
import stat
import threading
from functools import partial
from pathlib import Path

from . import rewindnames
from .folders import FdFolder, open_root
from .leftovers import remove_checked
from .osflags import DESCRIPTORS, O_CLOEXEC

_DIR = os.O_RDONLY | O_CLOEXEC | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)

# (root, st_dev, st_ino) of each store this process holds open -> its opens not closed
_OPEN: dict[tuple[str, int, int], int] = {}
# probe-named entries an open looks at, at most: each costs a look and a writer's look
# (``kill``, ``/proc``), and one that is not a dead probe's file (non-empty, a folder, a
# live pid's) is never removed, so 10,000 planted names cost every open 0.59 s (redteam44).
# Where there are more, a fresh random few each open: a real leftover is reached in time
SWEEP_MAX = 32
_LOCK = threading.Lock()


def opened(root: Path) -> tuple[str, int, int] | None:
    """Record the store at ``root`` as open: a probe on its device may be made there. The
    token for ``closed``; None where its root cannot be looked at (no probe goes there)."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    token = (os.fspath(root), st.st_dev, st.st_ino)
    with _LOCK:
        _OPEN[token] = _OPEN.get(token, 0) + 1
    return token


def closed(token: tuple[str, int, int] | None) -> None:
    """Give up one ``opened`` of that store (once its last open is closed, no probe goes
    there)."""
    if token is None:
        return
    with _LOCK:
        left = _OPEN.get(token, 0) - 1
        if left > 0:
            _OPEN[token] = left
        else:
            _OPEN.pop(token, None)


def place(dev: int) -> FdFolder | None:
    """An open store's root on device ``dev``, opened (the caller closes it); None if no open
    store's root is there, or its path leads elsewhere now (a store replaced or moved: the
    probe is made where it was asked, as before)."""
    with _LOCK:
        roots = [(path, ino) for path, d, ino in _OPEN if d == dev]
    for path, ino in roots:
        try:
            fd = os.open(path, _DIR)
        except OSError:
            continue
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) == (dev, ino):
            return FdFolder(fd, path)
        os.close(fd)
    return None


def _probe_file(name: str, st: os.stat_result) -> bool:
    """Whether ``name`` (its ``lstat`` in ``st``) is another process's probe file: a
    probe's name down to its check, an empty regular file of this user. This process's
    own are live (another thread's probe) or its own to remove."""
    got = rewindnames.parse(name)
    if got is None or not rewindnames.is_probe(*got) or got[0] == os.getpid():
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0 and st.st_uid == os.geteuid()


def _left_probe(name: str, st: os.stat_result) -> bool:
    """Whether ``name`` is a probe file (``_probe_file``) a killed process left: its writer
    gone, or its pid now a process started after the file was made."""
    pid = (rewindnames.parse(name) or (0, ""))[0]
    return _probe_file(name, st) and rewindnames.writer_gone(pid, st.st_ctime)


def sweep(root: Path) -> list[str]:
    """Remove the probe files a killed process left in the store's root; the names removed.
    The root is listed by path (5 system calls an open; by descriptor, ``os.listdir`` dups
    it first: 8 and the open's 2) and opened only where a probe's name is there. Each is
    moved to a probe name of this process's first and looked at there
    (``leftovers.remove_checked``): a file put in its place meanwhile is not removed. At
    most ``SWEEP_MAX`` names are looked at an open (planted thousands cost each open). Never
    fails the open that asked (a read-only store, a root that cannot be listed: left)."""
    removed: list[str] = []
    if not DESCRIPTORS:
        return removed  # no probe is made where folders are reached by path
    try:
        names = [n for n in os.listdir(root) if n.startswith(rewindnames.PREFIX)]
        if not names:
            return removed
        if len(names) > SWEEP_MAX:
            import random  # only where names were planted: not an open's import

            names = random.sample(names, SWEEP_MAX)
        folder = open_root(os.fspath(root))
    except OSError:
        return removed
    with folder:
        for name in names:
            try:
                st = folder.lstat(name)
                if not _left_probe(name, st):
                    continue
                mine = rewindnames.probe(os.getpid(), os.urandom(2).hex())
                # looked at again once moved (the same file, still a probe's), not its
                # writer: the rename set a new ctime, which a reused pid's start precedes
                if remove_checked(folder, name, mine, st, partial(_probe_file, name)):
                    removed.append(name)
            except OSError:
                continue  # gone meanwhile, or the store is read-only: left as it is
    return removed
