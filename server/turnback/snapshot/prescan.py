"""The check of folder records on two cores, for a full scan in a one-shot process.

A full scan trusts a folder's record (one digest of its names and its files' stats,
kept in the stat cache) when the folder's listing still matches it: one ``lstat`` per
file. On the benchmark's 50,000 files that is most of a no-op checkpoint's time. Two
threads fight over the GIL (tried: slower); a forked child does not. The child checks
recorded folders from the front of the list and this process from the back, each
stopping short of what the other has finished (two counters in shared memory), so the
less busy side takes more. The child sends the names in the folders that matched
through a pipe; the walk takes those folders from their records without listing them.

Where the child comes from:
- ``fork_checker``: forked by the scan itself, once the stat cache is loaded;
- ``fork_worker``: forked by a process that will have threads (the server) before its
  first thread, idle until a scan hands it its folders (``Worker.start``). It calls a
  function of the forker's before it lists each folder (the server lays an inotify
  watch there, on an instance both processes hold), as the scan's walk does
  (``Scanner.before_listing``): watched first, then listed, on both sides. Given the
  workspace and stat cache the first scan will most likely use (the server's working
  folder's store), it starts at once instead, as the early child below does, and a
  scan adopts it only if it checks that workspace against that very file; its
  listings then predate the scan, which must re-list every folder whose watch has
  seen an event since (the server's watcher says which: ``Scanner.before_listing``);
- ``fork_early``: forked by the CLI's ``checkpoint`` before it imports anything else
  (about 55 ms of imports, on one core). That child reads the stat cache header itself
  and starts checking at once; the scan adopts it (``take_early``) if it checks the
  same workspace against the same stat cache file, else kills it. Its checks may be
  made a few tens of milliseconds before the scan starts: the state the command was
  given. The only write before the scan, finishing an interrupted rewind
  (``Store.recover``), drops it first.

Each folder is listed and its entries stat-ed by ``folder_parts``: one C call where the
install built ``_folderparts.c`` (no Python object an entry), else ``python_parts``; both
give the bytes the folder's record digests, so either checks any record.

Forks happen only on Linux, only with no other thread (``can_fork``), and a failed fork
or child (killed if stuck) only costs its folders being checked by the walk. This
module imports nothing of Turnback's and little else, so that the early child starts
checking within a few milliseconds.
"""

from __future__ import annotations

import _json
import marshal
import os
import struct
import sys
import time
from mmap import mmap
from stat import S_ISDIR, S_ISREG

import blake3

from ..fs import ready

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

# A full scan of a workspace of at least this many files (as many as the stat cache knows)
# has its folder records checked by two processes at once: below it, the fork costs more
# than the checks it takes off this process (break-even measured at 2,000-4,000 files).
# Counted from the cache's rows, not from the root folder's record: any incremental
# checkpoint (a server's) rebuilds the root and drops that record.
FORK_MIN_FILES = 3000

# the stat cache file's layout (statcache.py): MAGIC, u32 header length, JSON header, rows
MAGIC = b"TBSTAT3\n"  # 3: file modes carry permission bits (format 2)
U32 = struct.Struct("<I")
# The longest header read. A folder costs about 320 bytes of it (its record, tree, ignore
# signature and row span; 40-byte paths): SPEC's 500,000-file workspace (10,000 folders)
# about 3.2 MB, so 64 MiB holds some 200,000 folders. Anything in the store's folder may be
# planted: past this, or past what its own file can hold, the header is not read at all.
HEADER_MAX = 64 << 20

# A verified folder: (how many files, its folders' names, whether it holds an ignore file).
# Not the files' names: the walk takes them from the folder's recorded tree, and a child
# sending 50,000 of them made the CLI's no-op wait ~4 ms more (900 KB marshalled, read back)
Verified = tuple[int, list[str], bool]
# the files whose rules a folder's walk reads (``ignore.py``); here, so that a child that
# imports nothing of Turnback's can say whether a verified folder has one
IGNORE_FILES = (".gitignore", ".turnbackignore")
_IGNORE_SET = frozenset(IGNORE_FILES)
Identity = tuple[int, int, int]  # a loaded stat cache file's (inode, size, mtime_ns)

# getattr: Windows' os lacks both (the fork is Linux-only; this module must still import)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_STATKEY = struct.Struct("<QqqQI")
# Shared by the two processes: how many folders the child has checked from the front,
# the lowest index this process has checked from the back, (early child) the identity
# of the stat cache file the child loaded, zero until it has, and (worker) whether it
# started at once or waits for a job, zero until it has decided
_FRONT, _BACK, _IDENT = 0, 4, 8
_INT = struct.Struct("<i")
_IDENTITY = struct.Struct("<QQq")
_MODE = _IDENT + _IDENTITY.size
_SHARED_SIZE = _MODE + _INT.size
_UNDECIDED, _STARTED, _WAITING = 0, 1, 2
_NOT_STARTED = 2**31 - 1
_LENGTH = struct.Struct("<Q")  # before what the child sends


def listing_key(listing: list[os.DirEntry[str]], sts: list[os.stat_result]) -> str | None:
    """A digest of a folder's names and its files' stats (folders count by name only), or
    None where a stat cannot be packed (then the folder gets no record)."""
    got = listing_parts(listing, sts)
    return None if got is None else _digest(got[0])


_FOLDER = b"d"  # a folder's part of the digest: its name only


def _parts(sts: list[os.stat_result]) -> list[bytes] | None:
    """Each entry's part of the digest: a file's stat packed, or ``_FOLDER`` itself. None
    if a time does not fit 64 bits of nanoseconds (past 2262, or before 1677: any file's
    times are the user's to set): such a folder is never verified, as in the C check."""
    pack = _STATKEY.pack
    try:
        return [_FOLDER if S_ISDIR(st.st_mode)
                else pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
                for st in sts]
    except struct.error:
        return None


def _digest(data: bytes) -> str:
    """A folder record: the digest of its ``Parts``' first member."""
    return blake3.blake3(data).hexdigest()[:32]


# The record of a folder with no entries: never verified (``parts_matching`` refuses an
# empty listing); the walk's whole-tree case lists such a folder again (``Scanner._taken_whole``)
EMPTY_RECORD = _digest(b"")


def header_fits(hlen: int, size: int) -> bool:
    """Whether a stat cache header said to be ``hlen`` bytes long can be read from a file
    of ``size`` bytes: it fits in the file beside the fixed parts, and under
    ``HEADER_MAX`` (a length is read from disk: nothing is allocated from it before this)."""
    return hlen <= min(HEADER_MAX, size - len(MAGIC) - 3 * U32.size)


def can_fork() -> bool:
    """A fork is safe only with no other thread (one could hold a lock the child needs).

    Linux only: elsewhere (macOS) system libraries are not fork-safe without an exec, and
    Windows has no ``fork``. Not either where folders are reached by path
    (``TURNBACK_FS_PATHS=1``, see ``fs/osflags.py``): the checks go through descriptors.
    A process that has not imported ``threading`` has started no thread through it: the
    CLI's early fork does not import it first (~2 ms before the child can start).
    """
    threading = sys.modules.get("threading")
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and os.environ.get("TURNBACK_FS_PATHS") != "1"
            and (threading is None or threading.active_count() == 1))


# A folder's digest input and what ``Verified`` needs of it: (the names joined by NUL,
# then each entry's part; how many entries; its folders' names; whether an ignore file
# is there). ``python_parts`` makes it, or ``_folderparts.folder_parts`` in C (built by
# the install where a compiler is: no DirEntry nor stat_result an entry, ~40-60 ms of a
# no-op's CPU on SPEC's workspace, bench/RESULTS.md "ccheck16").
Parts = tuple[bytes, int, list[str], bool]


def python_parts(fd: int) -> Parts | None:
    """The ``Parts`` of the folder of descriptor ``fd`` (left open), or None if it or an
    entry cannot be read. Listed through a duplicate of ``fd``, read from its start; the
    entries stat-ed relative to it (``fstatat``), cheaper than by path."""
    try:
        with os.scandir(fd) as it:
            listing = list(it)
        sts = [de.stat(follow_symlinks=False) for de in listing]
    except OSError:
        return None
    return listing_parts(listing, sts)


def listing_parts(listing: list[os.DirEntry[str]], sts: list[os.stat_result]) -> Parts | None:
    """The ``Parts`` of a folder listed and stat-ed already, or None if a stat cannot be
    packed (a time past 2262, as C's answer)."""
    parts = _parts(sts)
    if parts is None:
        return None
    names = [de.name for de in listing]
    # the folders by the digest's own parts (most folders hold none: no second pass)
    dirs = ([name for name, part in zip(names, parts, strict=True) if part is _FOLDER]
            if _FOLDER in parts else [])
    data = "\0".join(names).encode("utf-8", "surrogateescape") + b"".join(parts)
    return data, len(names), dirs, not _IGNORE_SET.isdisjoint(names)


def _compiled() -> Callable[[int], Parts | None] | None:
    """The C ``folder_parts`` where it was built and hashes what Python would: names
    decoded as UTF-8 with surrogate escapes (Python's own encoding of them back is then
    the bytes on disk, which C hashes)."""
    if (sys.getfilesystemencoding() != "utf-8"
            or sys.getfilesystemencodeerrors() != "surrogateescape"):
        return None
    try:  # by name: import-linter takes a module with no .py file for a foreign package
        module = __import__(f"{__package__}._folderparts", fromlist=["folder_parts"])
    except ImportError:  # not built (no compiler at install, not Linux): Python's path
        return None
    found: Callable[[int], Parts | None] | None = getattr(module, "folder_parts", None)
    return found


compiled_parts = _compiled()  # None: not built here, or names not decoded as UTF-8
folder_parts = compiled_parts or python_parts


def verify_one(root_fd: int, rel: str, want: str | None, held: int | None = None
               ) -> Verified | None:
    """A folder's ``Verified`` if its listing still matches its record
    ``want``, else None. Opened relative to the workspace's descriptor, without following
    a last symlink: what a walk would reach (it does not follow links either); or
    ``held``, that folder opened already (left open)."""
    if held is None:
        try:
            fd = os.open(rel or ".", _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=root_fd)
        except (OSError, ValueError):  # ValueError: a NUL in a planted record's name
            return None
    else:
        fd = held
    try:
        got = folder_parts(fd)
    finally:
        if held is None:
            os.close(fd)
    return parts_matching(got, want)


def parts_matching(got: Parts | None, want: str | None) -> Verified | None:
    """A folder's ``Verified`` if its ``Parts`` digest to the record ``want``, else None
    (an empty folder has no record)."""
    if got is None or not got[1] or _digest(got[0]) != want:
        return None
    _data, entries, dirs, has_ignore = got
    return entries - len(dirs), dirs, has_ignore


def matching(listing: list[os.DirEntry[str]], sts: list[os.stat_result],
             want: str | None) -> Verified | None:
    """A listing's ``Verified`` if it and its entries' stats still digest to the record
    ``want``, else None. The walk's check and the forked one alike."""
    return parts_matching(listing_parts(listing, sts), want)


def verify_folders(root: str, folders: list[str], recs: dict[str, str], shared: mmap,
                   from_back: bool, before: Callable[[str], bool | None] | None = None,
                   opened: Callable[[str], int | None] | None = None,
                   ) -> dict[str, Verified]:
    """Check folders from one end of the list until the other process's checks are met;
    return those that matched.

    Each side stops short of a folder the other has finished; both may check the one in
    between (harmless). The back side (this process) stops only where the front's
    finished checks begin, so every folder is checked by one or the other. ``before(rel)``
    is called before each folder is listed; False from it leaves the folder to the walk.
    ``opened(rel)`` opens each folder: the descriptor to list (its own to close), or None,
    which leaves the folder to the walk; by default, from the folder above without
    following a link (``_Below``).
    """
    out: dict[str, Verified] = {}
    unpack, pack = _INT.unpack_from, _INT.pack_into
    try:
        below = _Below(root)
    except OSError:
        return out
    if opened is None:
        # each folder opened from the one above, no link followed: by its path, a link
        # swapped in above it and out again before the walk had a folder outside (the
        # one moved away) verified as this one (docs/RELIABILITY.md, redteam11)
        opened = below.open
    root_fd = below.root
    try:
        if from_back:
            for i in range(len(folders) - 1, -1, -1):
                if i < unpack(shared, _FRONT)[0]:
                    break
                rel = folders[i]
                got = _verify(root_fd, rel, recs.get(rel), before, opened)
                if got is not None:
                    out[rel] = got
                pack(shared, _BACK, i)
        else:
            for i, rel in enumerate(folders):
                if i >= unpack(shared, _BACK)[0]:
                    break
                got = _verify(root_fd, rel, recs.get(rel), before, opened)
                if got is not None:
                    out[rel] = got
                pack(shared, _FRONT, i + 1)
    finally:
        below.close()
    return out


def _verify(root_fd: int, rel: str, want: str | None,
            before: Callable[[str], bool | None] | None,
            opened: Callable[[str], int | None]) -> Verified | None:
    if before is not None and before(rel) is False:
        return None
    held = opened(rel)
    return None if held is None else verify_one(root_fd, rel, want, held)


def recorded_folders(dirrecs: dict[str, str], dirtrees: Mapping[str, object]) -> list[str]:
    """The folders worth checking, in the stat cache's order (both processes agree). A
    planted record of a path leading out of the workspace (``..``, absolute) is left out:
    a walk never reaches it, and a child must not list nor watch it. Nor one with a NUL,
    which no path holds (``os.open`` raised ValueError: every checkpoint failed)."""
    return [rel for rel in dirrecs
            if rel in dirtrees and not rel.startswith("/") and ".." not in rel.split("/")
            and "\0" not in rel]


class Checker:
    """A forked child checking folder records from the front, and its pipe."""

    def __init__(self, pid: int, rfd: int, shared: mmap, workspace: str,
                 stat_path: str | None) -> None:
        self.pid = pid
        self.rfd = rfd
        self.shared = shared
        self.workspace = workspace
        self.stat_path = stat_path  # an early child's guess; None: the scan's own child
        # a worker's watch numbers of the folders it verified (after ``finish``)
        self.laid: dict[str, int] = {}

    def identity(self) -> Identity:
        """What an early child loaded: its stat cache file's identity (zeros until then)."""
        ino, size, mtime = _IDENTITY.unpack_from(self.shared, _IDENT)
        return ino, size, mtime

    def mode(self, deadline: float) -> int:
        """Whether a worker started at once or waits for a job, once it has decided (it
        reads the stat cache header first: milliseconds); undecided at ``deadline``."""
        while True:
            (mode,) = _INT.unpack_from(self.shared, _MODE)
            if mode != _UNDECIDED or time.monotonic() >= deadline:
                return int(mode)
            time.sleep(0.001)

    def finish(self, folders: list[str], recs: dict[str, str],
               before: Callable[[str], bool | None] | None = None) -> dict[str, Verified]:
        """Check from the back until the child's checks are met; add what it found."""
        reaped = False
        started = time.monotonic()
        try:
            verified = verify_folders(self.workspace, folders, recs, self.shared,
                                      from_back=True, before=before)
            # the child has at most one folder left to check: far longer means it is stuck
            data = _read_child(self.rfd, 1.0 + 4 * (time.monotonic() - started))
            if data is not None:
                # all of it (its length says so) before the child has even exited
                found, self.laid = _child_found(data)
                verified = {**found, **verified}
                os.waitpid(self.pid, 0)
                reaped = True
            return verified
        finally:
            self._close(reaped)

    def kill(self) -> None:
        """Stop the child (unused) and reap it."""
        self._close(False)

    def _close(self, reaped: bool) -> None:
        os.close(self.rfd)
        self.shared.close()
        if not reaped:
            import signal

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)


def _fork(workspace: str, stat_path: str | None,
          child: Callable[[mmap], dict[str, Verified]
                          | tuple[dict[str, Verified], dict[str, int]]]) -> Checker | None:
    """Fork a child that runs ``child(w, shared)`` and exits; None if it cannot be made."""
    shared = mmap(-1, _SHARED_SIZE)  # anonymous and shared: the child writes these pages
    _INT.pack_into(shared, _BACK, _NOT_STARTED)
    r, w = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(r, fcntl.F_SETPIPE_SZ, 1 << 20)  # the child need not wait for a reader
    except (OSError, AttributeError):
        pass
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        shared.close()
        return None
    if pid == 0:  # the child: check, send, and leave without running any clean-up
        code = 1
        try:
            os.close(r)
            for fd in (0, 1, 2):  # hold no caller's pipe open (it prints nothing)
                if fd != w:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            found = marshal.dumps(child(shared))
            out = memoryview(_LENGTH.pack(len(found)) + found)
            while out:
                out = out[os.write(w, out):]
            os.close(w)  # the end of the data: the parent need not wait for this exit
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return Checker(pid, r, shared, workspace, stat_path)


def fork_checker(workspace: str, folders: list[str], recs: dict[str, str]) -> Checker | None:
    """A child checking ``folders`` from the front (the caller then calls ``finish``)."""

    def child(shared: mmap) -> dict[str, Verified]:
        return verify_folders(workspace, folders, recs, shared, from_back=False)

    return _fork(workspace, None, child)


# -- a server's worker, forked before its first thread ---------------------------------
JOB_WAIT_S = 10.0  # the longest a scan waits for the worker to read its job (MBs at 500k)


class Worker:
    """A child forked idle (``fork_worker``), waiting for one job, or checking already
    the folders of the workspace and stat cache it was given (``early``)."""

    def __init__(self, checker: Checker, job: int, early: tuple[str, str] | None) -> None:
        self._checker = checker
        self._job = job  # the write end of the pipe the child reads its job from
        self._early = early  # (workspace, stat cache path) it may have started on

    def start(self, workspace: str, folders: list[str], recs: dict[str, str],
              stat_path: str = "", identity: Identity | None = None) -> Checker | None:
        """Have the child check ``folders`` from the front (then call ``finish``). None
        (the child killed) if it does not take its job within ``JOB_WAIT_S``: the walk
        then checks every folder itself, never waits on a stuck child. A child that
        started at once is kept only if it checks ``workspace`` against the stat cache
        file at ``stat_path`` with this ``identity`` (what the scan loaded): then
        ``folders`` and ``recs`` are the ones it read itself."""
        self._checker.workspace = workspace
        deadline = time.monotonic() + JOB_WAIT_S
        if self._early is not None:
            mode = self._checker.mode(deadline)
            if mode == _STARTED:
                if ((workspace, stat_path) == self._early and identity is not None
                        and self._checker.identity() == identity):
                    os.close(self._job)
                    return self._checker
                self.kill()  # another workspace or store, or the file changed since
                return None
            if mode != _WAITING:
                self.kill()  # stuck reading the stat cache
                return None
        data = marshal.dumps((workspace, folders, recs))
        out = memoryview(_LENGTH.pack(len(data)) + data)
        try:
            os.set_blocking(self._job, False)
            while out:
                left = deadline - time.monotonic()
                if left <= 0 or not ready.writable(self._job, left):
                    raise TimeoutError
                out = out[os.write(self._job, out):]
        except (OSError, TimeoutError):
            self.kill()
            return None
        os.close(self._job)
        return self._checker

    def kill(self) -> None:
        """Stop the child unused, and reap it."""
        os.close(self._job)
        self._checker.kill()

    def laid(self) -> dict[str, int]:
        """The watch numbers ``lay`` gave the folders the child verified (once checked):
        the walk adopts them instead of asking the kernel again."""
        return self._checker.laid


def fork_worker(lay: Callable[[int], int | None], early: tuple[str, str] | None = None
                ) -> Worker | None:
    """An idle child for a process about to start threads (``can_fork`` only holds
    before them): it waits for one job (``Worker.start``) and calls ``lay(fd)`` with
    each folder's descriptor (opened from the workspace down, no link followed) before it
    lists the folder (its watch number; None: it does not list it, the walk will). With
    ``early`` = (workspace, stat cache path) it first reads that file's folder records
    and, if they are worth a child (``FORK_MIN_FILES``), checks them at once instead. It
    never writes to the store. None if it cannot be made."""
    if not can_fork():
        return None
    job_r, job_w = os.pipe()

    def child(shared: mmap) -> tuple[dict[str, Verified], dict[str, int]]:
        os.close(job_w)
        if early is not None:
            got = read_records(early[1])
            if got is not None and got[3] >= FORK_MIN_FILES:
                identity, recs, trees, _files = got
                _IDENTITY.pack_into(shared, _IDENT, *identity)
                _INT.pack_into(shared, _MODE, _STARTED)
                return _check(early[0], recorded_folders(recs, trees), recs, shared, lay)
            _INT.pack_into(shared, _MODE, _WAITING)
        got_job = _read_child(job_r, 3600.0)  # EOF with nothing: the parent exited, no job
        if not got_job or len(got_job) < _LENGTH.size:
            return {}, {}
        workspace, folders, recs = marshal.loads(memoryview(got_job)[_LENGTH.size:])
        return _check(workspace, folders, recs, shared, lay)

    checker = _fork(early[0] if early is not None else "", None, child)
    os.close(job_r)
    if checker is None:
        os.close(job_w)
        return None
    return Worker(checker, job_w, early)


def _check(workspace: str, folders: list[str], recs: dict[str, str], shared: mmap,
           lay: Callable[[int], int | None]) -> tuple[dict[str, Verified], dict[str, int]]:
    """A worker's checks from the front, ``lay`` called on each folder's descriptor first;
    the folders verified, and their watch numbers."""
    laid: dict[str, int] = {}
    try:
        below = _Below(workspace)
    except OSError:
        return {}, {}

    def opened(rel: str) -> int | None:
        fd = below.open(rel)
        if fd is None:
            return None  # a link or gone on the way: left to the walk, which follows none
        wd = lay(fd)
        if wd is None:
            return None
        laid[rel] = wd
        return fd  # listed as watched: the very folder

    try:
        found = verify_folders(workspace, folders, recs, shared, from_back=False,
                               opened=opened)
    finally:
        below.close()
    return found, {rel: laid[rel] for rel in found}


class _Below:
    """The folders from the workspace down to the last one opened, each opened relative to
    the one above without following a link (``O_NOFOLLOW | O_DIRECTORY``).

    The child watches what it opened, not a path (``lay(fd)``: a watch on
    ``/proc/self/fd/N``): a path, even checked folder by folder with ``lstat`` first, let a
    link swapped in above a folder and out again between the check and the watch put that
    watch on a folder outside, which the walk then adopted (changes in the real folder
    missed until the next walk). Folders come in the stat cache's order (a folder's
    subfolders after it, mostly), so the descriptors of the folders above are kept: one
    ``openat`` a folder, as many descriptors held as the path is deep."""

    def __init__(self, workspace: str) -> None:
        self._path: list[tuple[str, int]] = [("", os.open(workspace, _DIR_FLAGS))]
        self.root = self._path[0][1]  # the workspace's descriptor (until ``close``)

    def open(self, rel: str) -> int | None:
        """The descriptor of folder ``rel`` (held until the next ``open``), or None."""
        path = self._path
        while len(path) > 1:  # keep the folders above ``rel`` (and itself)
            top = path[-1][0]
            if rel == top or (rel.startswith(top) and rel[len(top)] == "/"):
                break
            os.close(path.pop()[1])
        done = path[-1][0]
        if rel == done:
            return path[-1][1]
        for name in (rel[len(done) + 1:] if done else rel).split("/"):
            try:
                fd = os.open(name, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0),
                             dir_fd=path[-1][1])
            except (OSError, ValueError):  # a link, gone, a NUL in a planted name
                return None
            path.append((f"{path[-1][0]}/{name}" if path[-1][0] else name, fd))
        return path[-1][1]

    def _drop(self, keep: int) -> None:
        while len(self._path) > keep:
            os.close(self._path.pop()[1])

    def close(self) -> None:
        self._drop(0)


# -- the CLI's early child ----------------------------------------------------------------
_early: Checker | None = None


def read_records(path: str) -> tuple[Identity, dict[str, str], dict[str, object], int] | None:
    """(identity, folder records, folder trees, files) from a stat cache file's header (and
    the row count after it), or None."""
    try:
        # not a link nor a FIFO (an open of one would wait for a writer forever): anything
        # may be planted in the store's folder; a regular file only
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with open(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not S_ISREG(st.st_mode):
                return None
            head = f.read(len(MAGIC) + U32.size)
            if head[:len(MAGIC)] != MAGIC:
                return None
            (hlen,) = U32.unpack_from(head, len(MAGIC))
            if not header_fits(hlen, st.st_size):
                return None  # not read into memory: the walk's store says so in the log
            header = json_loads(f.read(hlen))
            (files,) = U32.unpack(f.read(U32.size))
        recs = header.get("dirrecs") or {}
        trees = header.get("dirtrees") or {}
        if not isinstance(recs, dict) or not isinstance(trees, dict):
            return None
    except (OSError, ValueError, TypeError, AttributeError, struct.error, RecursionError,
            StopIteration):  # StopIteration: no JSON value where one must begin
        # RecursionError: a planted header nested deeper than ``json`` goes (``[[[...]]]``);
        # uncaught, it ended the server's worker before it said it waits for a job, and
        # the first checkpoint waited ``JOB_WAIT_S`` for it
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns), recs, trees, files


class _Scanning:
    """What ``json``'s C scanner reads of its decoder: ``json.loads``'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


_JSON_SPACE = " \t\n\r"


def json_loads(raw: bytes) -> Any:
    """``json.loads`` of UTF-8 text, by the very C scanner ``json`` uses, without importing
    ``json``: it brings ``re``, ``enum``, ``functools`` and ``collections`` (~6 ms of CPU),
    which the CLI's early child would otherwise import before it forks (serial time, the
    child's start that much later) or the child after it (the same CPU twice). Raises
    ValueError (bad UTF-8 or JSON, data after the value), StopIteration (no value where
    one begins) or RecursionError (nested too deep), as ``json`` does inside."""
    text = raw.decode("utf-8")
    begin = len(text) - len(text.lstrip(_JSON_SPACE))
    value, end = _json.make_scanner(_Scanning)(text, begin)  # type: ignore[arg-type]
    if text[end:].strip(_JSON_SPACE):
        raise ValueError(f"data after the JSON value at {end}")
    return value


def fork_early(workspace: str, stat_path: str) -> None:
    """Start checking ``workspace``'s folder records in a child, before the scan exists.

    The child loads the stat cache header itself; a small workspace (or no cache) ends
    it at once. Not taken by a scan (``take_early``), it is killed at exit.
    """
    global _early
    if _early is not None or not can_fork():
        return

    def child(shared: mmap) -> dict[str, Verified]:
        got = read_records(stat_path)
        if got is None:
            return {}
        identity, recs, trees, files = got
        if files < FORK_MIN_FILES:
            return {}
        _IDENTITY.pack_into(shared, _IDENT, *identity)
        return verify_folders(workspace, recorded_folders(recs, trees), recs, shared,
                              from_back=False)

    _early = _fork(workspace, stat_path, child)
    if _early is not None:
        import atexit

        atexit.register(drop_early)


def take_early(workspace: str, stat_path: str, identity: Identity | None) -> Checker | None:
    """The early child, if it checks this workspace against this very stat cache file
    (same path and identity as the scan loaded); otherwise it is killed."""
    global _early
    early, _early = _early, None
    if early is None:
        return None
    if (early.workspace == workspace and early.stat_path == stat_path
            and identity is not None and early.identity() == identity):
        return early
    early.kill()
    return None


def drop_early() -> None:
    """Kill the early child if no scan took it (the workspace may be about to change)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.kill()


def _read_child(fd: int, timeout: float) -> bytes | None:
    """Everything the child writes before it closes its end; None if it takes too long."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not ready.readable([fd], left):
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _child_found(data: bytes) -> tuple[dict[str, Verified], dict[str, int]]:
    """The folders the child verified, from what it sent, and (a worker's) their watch
    numbers: nothing unless it is all there (a child sends only once it has finished)."""
    if len(data) < _LENGTH.size or _LENGTH.unpack_from(data)[0] != len(data) - _LENGTH.size:
        return {}, {}
    try:
        got = marshal.loads(memoryview(data)[_LENGTH.size:])
    except (EOFError, ValueError, TypeError):
        return {}, {}
    if isinstance(got, tuple) and len(got) == 2:
        found, laid = got
        if isinstance(found, dict) and isinstance(laid, dict):
            return found, laid
        return {}, {}
    return (got if isinstance(got, dict) else {}), {}
