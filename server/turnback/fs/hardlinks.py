"""Whether a folder's file system makes hard links at all, asked where a link was refused.

A put back moves a file to a name by ``link`` then ``unlink``, which replaces nothing. Where
the file system has no hard links (a FUSE passthrough, FAT, some network file systems) every
``link`` is refused, each file system with an errno of its own (EPERM, EROFS, ENOSYS,
EOPNOTSUPP, EACCES...): a list of errnos at the call site took some for "no hard links" and
missed others. The file system is asked instead, with files of this process's own: an
empty file made under a rewind's temporary name of a probe's (``rewindnames.probe``: left
out of every checkpoint) and linked to a second one; both unlinked. They are made in an
open store's root on the same device (``probeplace``), where the next open of that store
removes one a killed process left; on another device, in the folder asked about, where the
next rewind's or recovery's clean-up in that folder removes it (trust30). A refusal of one
link where links work (EIO, a full link count) is then told from a file system that has
none.
"""

from __future__ import annotations

import errno
import os
import time

from . import probeplace, rewindnames
from .folders import FdFolder
from .osflags import O_CLOEXEC

# st_dev -> the last answer there; a "no" is trusted for ``NO_LINKS_FOR`` seconds
# (``_asked``), a "links" never (``makes_links``)
_by_device: dict[int, bool] = {}
_asked: dict[int, float] = {}  # st_dev -> when (``_clock``) its answer was made
# how long a "no links" answer stands. Kept for the process's life, a wrong one (asked while
# a device number now another mount's was in use, or answered for a moment's reason no errno
# below tells) made a server running for days skip second names (slower renames) and take
# a put back's refused link where links work (EIO) for "no links" (renamed past it, without
# replacing: fs/exchange.py, or after a look where the system cannot): trust33. A file
# system without links pays one refused link and one probe a minute for it
NO_LINKS_FOR = 60.0
_clock = time.monotonic

# the probe's link refused for this moment or these names, not for what the file system is
# (a bad sector, a full folder block or quota, its name taken, a signal): no answer kept,
# where "no links" was kept for the process's life and one put back's EIO renamed past
# (redteam38). A file system without links answering one of these is asked again each time.
# ENOENT: the probe's first file taken away before its link (another process's sweep of a
# store root that cannot see this pid, a writer of that root), kept as "no links" (redteam44)
_NO_ANSWER = frozenset({errno.EIO, errno.ENOSPC, errno.EDQUOT, errno.EEXIST, errno.EMLINK,
                        errno.EINTR, errno.ENOMEM, errno.EAGAIN, errno.ENOENT})


def makes_links(dfd: FdFolder) -> bool:
    """Whether the file system holding ``dfd`` makes hard links; asked by a caller whose
    ``link`` there was refused. A "no" made less than ``NO_LINKS_FOR`` seconds ago stands
    (one ``fstat``); a "links" is asked again, as the refused link is the one event that
    can show it wrong (a device number now another mount's, without links: every put
    back's refusal raised for the process's life, trust33), and costs a probe only where
    a link is refused on a file system that makes them. Where the probe cannot make its
    own file (a read-only folder), True: the caller's refusal is then a real one, raised."""
    dev = os.fstat(dfd.fd).st_dev
    if known_without(dev):
        return False
    known = _probe_on(dev, dfd)
    if known is not None:
        _by_device[dev] = known
        _asked[dev] = _clock()
    return True if known is None else known


def known_without(dev: int) -> bool:
    """Whether the device ``dev`` (an ``st_dev``) was found to make no hard links less than
    ``NO_LINKS_FOR`` seconds ago: the answer kept, no system call made (a caller about to
    ``link`` there skips it)."""
    return _by_device.get(dev) is False and _clock() - _asked.get(dev, 0.0) < NO_LINKS_FOR


def _probe_on(dev: int, dfd: FdFolder) -> bool | None:
    """The probe's answer for device ``dev``, asked in an open store's root there if there
    is one (``probeplace``), else (or where it takes no file of ours) in ``dfd``."""
    store_root = probeplace.place(dev)
    if store_root is not None:
        with store_root:
            known = _probe(store_root)
        if known is not None:
            return known
    return _probe(dfd)


def _probe(dfd: FdFolder) -> bool | None:
    """The file system's answer; None where this folder takes no file of ours (not kept:
    another folder of the device may) or its link failed for the moment (``_NO_ANSWER``)."""
    first = rewindnames.probe(os.getpid(), os.urandom(2).hex())
    second = rewindnames.probe(os.getpid(), os.urandom(2).hex())
    try:
        os.close(dfd.open(first, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC, 0o600))
    except OSError:
        return None
    try:
        dfd.link(first, second)
    except OSError as exc:
        return None if exc.errno in _NO_ANSWER else False
    else:
        _unlink(dfd, second)
        return True
    finally:
        _unlink(dfd, first)


def _unlink(dfd: FdFolder, name: str) -> None:
    try:
        dfd.unlink(name)
    except OSError:
        pass  # a rewind's temporary name: the clean-up's
