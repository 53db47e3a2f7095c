"""Atomic file writes: temp file in the same folder, optional fsync, rename.

A reader sees the old content or the new, never a torn mix; a crash leaves at
worst a stray ``.tmp-*`` file that ``fsck``/``gc`` remove.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from . import instore
from .folders import FdFolder, Folder
from .osflags import O_BINARY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK
from .privacy import FILE_MODE, make_dir
from .replacing import write_over
from .synchelpers import run_on_helper
from .tempnames import temp_name

_syncfs: Callable[[int], int] | None = None


def fsync_dir(path: Path) -> None:
    """Persist a rename: on Linux the directory entry needs its own fsync."""
    try:
        fd = os.open(path, os.O_RDONLY | O_DIRECTORY)
    except OSError:  # Windows opens no folder: NTFS journals the rename itself
        return
    try:
        fsync_folder_fd(fd)
    finally:
        os.close(fd)


def fsync_folder_fd(fd: int) -> None:
    """``fsync_dir`` of a folder already open (the caller's descriptor, not closed here):
    no path followed to it."""
    try:
        os.fsync(fd)
    except OSError:
        pass


def fsync_all(files: Sequence[Path], dirs: Sequence[Path] = (),
              meanwhile: Callable[[], None] | None = None, fds: Sequence[int] = (),
              dir_fds: Sequence[int] = ()) -> None:
    """Make ``files`` and the names in ``dirs`` durable, the fsyncs waited for together.

    A journalling file system (ext4's jbd2, XFS's log) commits fsyncs that wait at the
    same time as one transaction: a checkpoint's pack, pack index and their folder
    synced together cost about one fsync, not three
    (``bench/probes/objects/fsync_group.py``: 9-11 ms one after the other, 2-4 ms together,
    on the benchmark's VM under load). Their
    order among themselves does not matter: the caller commits only once all of them
    are done, which this call returning means. A file's failure raises (as ``os.fsync``
    would); a folder's is ignored, as in ``fsync_dir``.

    ``meanwhile``: work for the caller's thread while the disk is waited for (every fsync
    then has a thread); it must not depend on the syncs, and what it raises is raised
    after they are done. ``fds``: files already open (the caller's), synced through
    their descriptors, first; ``dir_fds``: folders so, their failure ignored as ``dirs``'.
    """
    jobs: list[Callable[[], None]] = [partial(os.fsync, fd) for fd in fds]
    jobs += [partial(fsync_folder_fd, fd) for fd in dir_fds]
    jobs += [partial(fsync_file, f) for f in files]
    jobs += [partial(fsync_dir, d) for d in dirs]
    if meanwhile is not None:
        jobs.insert(0, meanwhile)
    if len(jobs) <= 1:
        for job in jobs:
            job()
        return
    # a helper thread per fsync but the first, kept between calls (``synchelpers``: a
    # forked child starts its own), each waited for by a lock
    errors: list[BaseException] = []
    waits = [run_on_helper(job, errors) for job in jobs[1:]]
    try:
        jobs[0]()
    except BaseException as exc:
        errors.insert(0, exc)
    for done in waits:
        done.acquire()
    if errors:
        raise errors[0]


def _no_syncfs(_fd: int) -> int:
    return -1


def syncfs(path: Path | str) -> bool:
    """Flush the whole file system holding ``path`` once (cheaper than an fsync per file).

    False where there is neither ``syncfs`` nor ``sync`` (Windows: flushing a volume
    takes an administrator's handle on it): the caller then syncs each file it wrote
    (``fsync_file``); a rewind's files were each synced as they were written.
    """
    global _syncfs
    call = _syncfs
    if call is None:
        import ctypes  # only when needed: importing it costs a no-op checkpoint ~10 ms

        try:
            call = ctypes.CDLL(None, use_errno=True).syncfs
        except (AttributeError, OSError, TypeError):  # not Linux: os.sync below
            call = _no_syncfs
        _syncfs = call
    try:
        fd = os.open(path, os.O_RDONLY | O_DIRECTORY)
    except OSError:  # Windows opens no folder with os.open
        if not hasattr(os, "sync"):
            return False
        os.sync()
        return True
    try:
        if call(fd) != 0:
            if not hasattr(os, "sync"):
                return False
            os.sync()
    finally:
        os.close(fd)
    return True


def fsync_file(path: Path | str) -> None:
    """``fsync`` the file at ``path``. Opened for reading where that suffices (POSIX);
    Windows' ``FlushFileBuffers`` refuses a read-only handle, so then for writing. Never
    through a link, and never waiting on a FIFO swapped in (a store file is input): both
    fail (``ELOOP``, ``EINVAL``), and the caller commits nothing."""
    flags = O_BINARY | O_NOFOLLOW | O_NONBLOCK
    fd = os.open(path, os.O_RDONLY | flags)
    try:
        os.fsync(fd)
        return
    except OSError:
        pass
    finally:
        os.close(fd)
    fd = os.open(path, os.O_RDWR | flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, fsync: bool = True, mode: int = FILE_MODE,
                 private_dirs: bool = True, sync_with: Sequence[Path] = (),
                 in_folder: Folder | None = None) -> None:
    """Write ``data`` to ``path`` so it is either fully there or not at all.

    The defaults suit the store (a 0600 file, missing folders 0700); a file written for
    the user elsewhere passes its ``mode`` and ``private_dirs=False`` (umask applies).
    ``sync_with``: files to make durable before ``path`` appears (with ``fsync``), synced
    together with its content (``fsync_all``): what it names, written just before.
    ``in_folder``: the folder holding ``path``, open (the caller's, not closed here):
    written there by name, not by path.
    """
    if in_folder is not None:
        _write_in(in_folder, path, (data,), os.O_WRONLY, fsync=fsync, mode=mode,
                  keep_open=False, sync_with=sync_with)
        return
    atomic_write_chunks(path, (data,), fsync=fsync, mode=mode, private_dirs=private_dirs,
                        sync_with=sync_with)


def atomic_write_chunks(path: Path, chunks: Iterable[bytes | memoryview], *, fsync: bool = True,
                        mode: int = FILE_MODE, private_dirs: bool = True,
                        keep_open: bool = False, sync_with: Sequence[Path] = ()) -> int | None:
    """``atomic_write`` of the concatenation of ``chunks``, written as they come: a file
    made of parts (the stat cache's, 70 MB at 500,000 files) is never joined in memory.
    ``keep_open``: returns a descriptor open on the file written (for reading; the caller
    closes it), whatever is renamed over ``path`` later."""
    flags = os.O_RDWR if keep_open else os.O_WRONLY
    folder = instore.folder_of(path, create=True)
    if folder is not None:  # a store's file: through its folder, never through a link
        try:
            return _write_in(folder, path, chunks, flags, fsync=fsync, mode=mode,
                             keep_open=keep_open, sync_with=sync_with)
        finally:
            folder.close()
    # by path, not through its folder opened for ``replacing.write_over``: with folders
    # reached by path (Windows) that doubled this write's CPU (bench/RESULTS.md, branch tidy)
    if private_dirs:
        make_dir(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / temp_name(path.name)
    fd = os.open(tmp, flags | os.O_CREAT | os.O_EXCL | O_BINARY, mode)
    closed = False
    try:
        _write_all(fd, chunks)
        if fsync and sync_with:
            fsync_all([tmp, *sync_with])
        elif fsync:
            os.fsync(fd)
        if not keep_open:
            closed = True
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        if not closed:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if fsync:
        fsync_dir(path.parent)
    return fd if keep_open else None


def _write_all(fd: int, chunks: Iterable[bytes | memoryview]) -> None:
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            n = os.write(fd, view)
            view = view[n:]


def _write_in(folder: Folder, path: Path, chunks: Iterable[bytes | memoryview], flags: int,
              *, fsync: bool, mode: int, keep_open: bool, sync_with: Sequence[Path]) -> int | None:
    """``atomic_write_chunks`` through ``folder`` (``fs/instore.py``), which holds ``path``."""
    def write(fd: int) -> None:
        _write_all(fd, chunks)
        if fsync:
            fsync_all(sync_with, meanwhile=partial(os.fsync, fd))

    fd = write_over(folder, path.name, flags, mode, write, keep_open=keep_open)
    if fsync:
        if isinstance(folder, FdFolder):
            try:
                os.fsync(folder.fd)
            except OSError:
                pass
        else:
            fsync_dir(Path(folder.path))
    return fd
