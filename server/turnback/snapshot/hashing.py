"""The files a scan must read: hashed and compressed on a thread pool (BLAKE3 and zstd
release the GIL), the few small ones of a watched workspace inline."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

import blake3

from ..fs.reading import NotRegular, open_regular
from ..objects.objectstore import BLOB, hash_bytes, seen_chunks
from ..objects.trees import STAT_MODES, Entry

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

from .nodes import HashedRow, Looked, Pending, Progress, ScanState
from .statcache import pack_row

WORKERS = max(2, min(8, (os.cpu_count() or 2) * 2))
INLINE_MAX = 64  # at most this many files to read: the small ones are read inline
INLINE_BYTES = 4 * 1024 * 1024


def _wait(futures: list[Future[Any]]) -> None:
    """Until every one of ``futures`` is done."""
    from concurrent.futures import wait

    wait(futures)


def _hash_file_only(path: str, size: int) -> str:
    h = blake3.blake3(BLOB + b"\0")
    with os.fdopen(open_regular(path), "rb") as f:
        for chunk in seen_chunks(f, size):  # as far as the size seen, as put_file stores
            h.update(chunk)
    return h.hexdigest()


class Hashing(ScanState):
    """The hashing pool of a ``Scanner``."""

    def _executor(self) -> ThreadPoolExecutor:
        """The hashing pool: made once, its threads kept for the next checkpoint."""
        with self._pool_lock:
            if self._pool is None:
                # imported here: a checkpoint that reads no file (a no-op) needs no pool
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(max_workers=WORKERS,
                                                thread_name_prefix="turnback-hash")
            return self._pool

    def close(self) -> None:
        """Stop the hashing pool's threads (a later scan starts it again)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _put_link(self, target: bytes) -> str:
        return self.objects.put(BLOB, target) if self._write else hash_bytes(BLOB, target)

    def _hash_pending(
        self,
        pending: list[Pending],
        dirty_paths: set[str],
        write: bool,
        started: int,
        progress: Progress | None,
    ) -> int:
        if not pending:
            return 0
        total = len(pending)
        results = self._results
        record = self.statcache.record_row if write else None

        def work(p: Pending) -> HashedRow:
            return self._hash_one(p, write, started)

        def keep(got: HashedRow) -> None:
            rel, res, row = got
            results[rel] = res
            if row is not None and record is not None:
                record(rel, row)

        if total <= INLINE_MAX:
            # a few files (the usual checkpoint of a watched workspace): small ones are read
            # here, which costs less than handing them to a thread; big ones go to the pool
            # meanwhile, where hashing and compressing release the GIL
            big = [p for p in pending if p.size >= INLINE_BYTES]
            futures = [self._executor().submit(work, p) for p in big]
            try:
                for p in pending:
                    if p.size < INLINE_BYTES:
                        keep(work(p))
                for f in futures:
                    keep(f.result())
                if progress is not None:
                    progress(total, total)
            except BaseException:
                for f in futures:
                    f.cancel()
                _wait(futures)
                raise
        else:
            def work_chunk(chunk: list[Pending]) -> list[HashedRow]:
                return [work(p) for p in chunk]

            from concurrent.futures import Future

            spent: Future[list[HashedRow]] = Future()
            spent.set_result([])
            pool = self._executor()
            chunks = [pool.submit(work_chunk, pending[i: i + 16]) for i in range(0, total, 16)]
            try:
                n = 0
                for i, fut in enumerate(chunks):
                    got = fut.result()
                    chunks[i] = spent  # its results are kept below: let the future go
                    for one in got:
                        keep(one)
                    before, n = n, n + len(got)
                    if progress is not None and (n // 256 != before // 256 or n == total):
                        progress(n, total)  # may raise to cancel
            except BaseException:
                for fut in chunks:
                    fut.cancel()  # stop hashing what is left
                _wait(chunks)
                raise
        return total

    def _hash_one(self, p: Pending, write: bool, started: int) -> HashedRow:
        """(path, (hash, mode, size) or None, its stat cache row): only small objects
        leave the thread, no ``stat_result`` (a first checkpoint would otherwise hold one
        result per file until the trees are built)."""
        path = self._prefix + p.rel
        try:
            # an incremental scan's file was looked at just now (``Looked``): not again
            st = p.st if isinstance(p, Looked) else os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                return p.rel, None, None
            if write:
                digest = self.objects.put_file(path, st.st_size)
            else:
                digest = _hash_file_only(path, st.st_size)
            row = pack_row(st, started, digest) if write else None
            return p.rel, (digest, st.st_mode, st.st_size), row
        except (FileNotFoundError, IsADirectoryError, NotRegular):
            # gone, or no regular file now (a folder, a link, a FIFO swapped in after the
            # lstat: never read through): as the next scan sees it
            return p.rel, None, None
        except OSError as exc:
            # there but unreadable (permissions, a name too long for the system, an
            # I/O error): reported, never taken as absent, which a rewind would delete
            self._unreadable.append({"path": p.rel,
                                     "reason": f"unreadable ({exc.strerror or exc})"})
            return p.rel, None, None

    def _submit(self, items: list[Pending]) -> list[Future[list[HashedRow]]]:
        """A streaming scan's folder: its files to the pool, 16 a task (one task per file
        would cost more to hand over than a small file to read)."""
        if not items:
            return []
        write, started = self._write, self._started

        def work_chunk(chunk: list[Pending]) -> list[HashedRow]:
            return [self._hash_one(p, write, started) for p in chunk]

        pool = self._executor()
        self._submitted += len(items)
        return [pool.submit(work_chunk, items[i: i + 16]) for i in range(0, len(items), 16)]

    def _collect(self, futures: list[Future[list[HashedRow]]]) -> None:
        """Wait for a folder's files (``_submit``): their results kept for its build,
        their rows recorded."""
        results = self._results
        record = self.statcache.record_row if self._write else None
        before = self._done
        for fut in futures:
            for rel, res, row in fut.result():
                results[rel] = res
                if row is not None and record is not None:
                    record(rel, row)
                self._done += 1
        progress = self._progress
        if progress is not None and self._done // 256 != before // 256:
            progress(self._done, self._submitted)  # may raise to cancel

    def _cancel_open(self) -> None:
        """Stop hashing the files of folders a failed streaming scan left unbuilt."""
        futures = [f for fs in self._open for f in fs]
        self._open = []
        for f in futures:
            f.cancel()
        _wait(futures)

    def _hashed(self, item: Pending) -> Entry | None:
        """The tree entry of a file this scan hashed; None if it could not be read as one."""
        res = self._results.pop(item.rel, None)  # built once: let it go
        if res is None:
            return None
        digest, mode, size = res
        return Entry(STAT_MODES[mode & 0o777], digest, size)
