"""The server's start-up walk on two cores: an inotify instance and an idle checking child,
both made before the server's first thread.

The CLI's no-op checks folder records on two cores (a child forked by the scan,
``snapshot/prescan.py``); a server cannot fork once it has threads (a lock held by
another thread stays held in the child forever), and a spawned child cost more than it
saved (bench/RESULTS.md, "Big workspaces, third pass"). So ``begin``, called by
``__main__`` before pygls and the rest are imported, makes an inotify instance and forks
a child that holds it too and waits. The first workspace folder's watcher adopts the
instance (``take``); its first walk hands the child the front half of the folder
records (``Scanner.worker``). The child lays a watch on each folder on the shared
instance before it lists it, as the walk does here: watched first, then listed, on
either side. Events on the child's watches reach this process with watch numbers it
does not know until its walk watches the same folder (the kernel gives back the same
number); the watcher keeps them until then (``InotifyWatcher``'s orphans).

The extension starts the server in the first workspace folder. When that folder holds
a store (``store_here``: never made here; not one a checkpoint would refuse, a link or
another user's), the child does not wait: it reads the stat cache's folder records
itself and starts checking at the fork, while this process imports pygls and
initializes, as the CLI's early child does. The first walk adopts it only if it scans
that workspace against that very stat cache file; its listings are older than the
walk, so the walk re-lists every folder with an event on the child's watch since
(``InotifyWatcher``'s ``_touched``). Anything else (another first folder, a store
elsewhere, no records) and the child waits for the walk's job as before.

``TURNBACK_START_WORKER=0`` leaves it out, ``TURNBACK_START_WORKER=idle`` keeps it
waiting for the walk's job (both for measuring, bench/probes/server/startup_walks.py).
"""

from __future__ import annotations

import os
from stat import S_ISDIR

from ...snapshot import prescan

TYPE_CHECKING = False  # not typing's: imported before anything else (see turnback/__init__)
if TYPE_CHECKING:
    from inotify_simple import INotify

# what changes a folder's listing or a file's bytes, mode or link target (MODIFY ATTRIB
# MOVED_FROM/TO CREATE DELETE), the watched folder itself going (DELETE_SELF MOVE_SELF),
# and ONLYDIR DONT_FOLLOW EXCL_UNLINK: what every workspace watch asks for
WATCH_MASK = (0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
              | 0x01000000 | 0x02000000 | 0x04000000)
DONT_FOLLOW = 0x02000000

_made: tuple[INotify, prescan.Worker] | None = None


def begin() -> None:
    """Make the instance and the idle child, if this process may still fork (Linux, no
    thread yet, folders reached through descriptors)."""
    global _made
    if _made is not None or os.environ.get("TURNBACK_START_WORKER") == "0":
        return
    if not prescan.can_fork():
        return
    try:
        from inotify_simple import INotify

        ino = INotify(nonblocking=True)
    except (ImportError, OSError):
        return

    def lay(fd: int) -> int | None:
        try:
            # the folder the child opened, whatever its path leads to now (the magic link
            # is followed: no DONT_FOLLOW; it names no other folder, as a path could)
            return int(ino.add_watch(f"/proc/self/fd/{fd}", WATCH_MASK & ~DONT_FOLLOW))
        except OSError:
            # gone, no folder, or refused (the limit): not listed there, the walk here
            # watches it first (a listing with no watch before it could miss a change)
            return None

    early = store_here() if os.environ.get("TURNBACK_START_WORKER") != "idle" else None
    worker = prescan.fork_worker(lay, early)
    if worker is None:
        ino.close()
        return
    _made = (ino, worker)


def take() -> tuple[INotify, prescan.Worker] | None:
    """The instance and its child, to the first watcher that asks (once)."""
    global _made
    made, _made = _made, None
    return made


def drop() -> None:
    """A folder is served without an inotify watcher (watching off, another watcher):
    kill the child and close the instance, which may hold the watches it laid at the
    fork and its results (it would keep them until the server exits)."""
    made = take()
    if made is not None:
        made[1].kill()
        made[0].close()


STORE_DIRNAME = ".turnback"  # store.config's (not imported: this runs before the rest)


def store_here() -> tuple[str, str] | None:
    """(workspace, stat cache file) of the store in the working folder, or None: none
    there, a store chosen elsewhere (``TURNBACK_STORE``), or one a checkpoint would refuse
    (a link, not a folder, another user's: ``fs/privacy.refuse_foreign``). Only read,
    never made; the file itself is checked where it is read (``prescan.read_records``)."""
    if os.environ.get("TURNBACK_STORE"):
        return None
    try:
        ws = os.path.realpath(os.getcwd())
        root = os.path.join(ws, STORE_DIRNAME)
        st = os.lstat(root)
        cache = os.lstat(os.path.join(root, "cache"))
    except OSError:
        return None
    if not (S_ISDIR(st.st_mode) and S_ISDIR(cache.st_mode)):
        return None  # a link, or not a folder
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return None  # another user's (root's sudo case too: left to the walk's child)
    return ws, os.path.join(root, "cache", "stat.bin")

