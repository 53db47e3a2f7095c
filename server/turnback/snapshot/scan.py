"""Turns the workspace on disk into a tree of objects (the work of a checkpoint).

A full scan walks every folder; an incremental scan (the server's watcher knows
which paths changed) re-lists only the folders on the paths to those changes and
reuses every other subtree of the previous scan as is. Either way files whose
stat matches the stat cache are not read, and the files that must be read are
hashed and compressed on a thread pool (BLAKE3 and zstd release the GIL). A full
scan in a one-shot process may check its folder records on two cores first
(``prescan``): the walk then takes each verified folder without listing it.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING, Any

import blake3

from ..objects.objectstore import BLOB, CHUNK, ObjectStore, hash_bytes
from ..objects.trees import DIR, FILE_MODES, LINK, Entry, Tree, TreeReader
from . import prescan
from .ignore import IGNORE_FILES, IgnoreRules
from .prescan import Verified, listing_key
from .statcache import RACY_MARGIN_NS, ROW, StatCache

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

Progress = Callable[[int, int], None]
WORKERS = max(2, min(8, (os.cpu_count() or 2) * 2))
INLINE_MAX = 64  # at most this many files to read: the small ones are read inline
INLINE_BYTES = 4 * 1024 * 1024


@dataclass(slots=True)
class ScanResult:
    tree: str
    files: int
    bytes: int
    skipped: list[dict[str, object]] = field(default_factory=list)
    read: int = 0  # files actually read (not served by the stat cache)


@dataclass(slots=True)
class _Pending:
    rel: str
    abs: str
    st: os.stat_result


@dataclass(slots=True)
class _Dir:
    entries: dict[str, Entry | _Dir | _Pending] = field(default_factory=dict)
    hits: int = 0  # files served by the stat cache
    clean: bool = True  # nothing but stat-cache hits and clean subfolders
    base: str | None = None  # an incremental scan's folder: the tree it patches
    changed: frozenset[str] = frozenset()  # ... and the names in it looked at again
    # a full scan's folder whose listing matched its stat-cache record: the names of its
    # files (every one as the last full scan saw it), which are not in ``entries``
    reused: list[str] | None = None


def _wait(futures: list[Future[Any]]) -> None:
    from concurrent.futures import wait

    wait(futures)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_IGNORE_SET = frozenset(IGNORE_FILES)


def _hash_file_only(path: str, size: int) -> str:
    h = blake3.blake3(BLOB + b"\0")
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


class Scanner:
    def __init__(
        self,
        workspace: Path,
        objects: ObjectStore,
        trees: TreeReader,
        ignore: IgnoreRules,
        statcache: StatCache,
        size_cap: int,
    ) -> None:
        self.workspace = workspace
        self._root = str(workspace)  # and a folder's path is this prefix and its own
        self._prefix = self._root if self._root.endswith(os.sep) else self._root + os.sep
        self.objects = objects
        self.trees = trees
        self.ignore = ignore
        self.statcache = statcache
        self.size_cap = size_cap
        self.counts: dict[str, tuple[int, int]] = {}  # tree hash -> (files, bytes)
        self._write = True
        self._started = 0
        self._keep: set[str] | None = None  # paths seen by the last full scan
        self._keep_in: list[tuple[str, list[str]]] = []  # ... and folders it took whole
        self._results: dict[str, tuple[str, os.stat_result] | None] = {}
        self._unreadable: list[dict[str, object]] = []  # files the last scan could not read
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        # Full scans may check folder records in a forked child (see ``_preverify``); off
        # unless the caller, a one-shot process (the CLI), turns it on: never in the server
        self.fork_verify = False
        self._verified: dict[str, Verified] = {}

    # -- public ------------------------------------------------------------------
    def scan(
        self,
        *,
        base: str | None = None,
        dirty: Iterable[str] | None = None,
        write: bool = True,
        progress: Progress | None = None,
        save_cache: bool = True,
    ) -> ScanResult:
        """Snapshot the workspace; with ``base`` and ``dirty``, only around the dirty paths.

        ``save_cache=False`` leaves the stat cache file to ``save_cache()``, which a
        checkpoint calls once the objects the scan wrote are committed.
        """
        self.statcache.load()
        self.statcache.new_dirrecs = {}  # filled by this scan's folders alone
        self._keep_in = []
        started = time.time_ns()
        skipped: list[dict[str, object]] = []
        pending: list[_Pending] = []
        dirty_paths: set[str] | None = None
        dirty_dirs: set[str] = set()
        if dirty is not None and base is not None:
            dirty_paths = {p.strip("/") for p in dirty}
            if any(p.rsplit("/", 1)[-1] in IGNORE_FILES for p in dirty_paths):
                dirty_paths = None  # the ignore rules changed: every path is in question
        if dirty_paths is None:
            self.ignore.forget()  # a full scan reads the ignore files afresh
        else:
            for p in dirty_paths:
                parts = p.split("/")
                for i in range(len(parts)):
                    dirty_dirs.add("/".join(parts[:i]))
        full = dirty_paths is None
        if not full and base is not None and not dirty_paths:
            # nothing changed since the scan that built ``base`` (a watcher said so): the
            # same tree, without a system call
            self._keep = None
            files, nbytes = self.count(base)
            return ScanResult(base, files, nbytes)
        self._write = write
        self._started = started
        self._results = {}
        if full or base is None:
            if self.fork_verify and write:
                self._verified = self._preverify()
            try:
                root = self._list("", None, True, None, set(), pending, skipped)
            finally:
                self._verified = {}
        else:
            assert dirty_paths is not None
            children: dict[str, set[str]] = {}  # folder -> names in it on a dirty path
            for p in dirty_paths:
                parts = p.split("/")
                for i, part in enumerate(parts):
                    children.setdefault("/".join(parts[:i]), set()).add(part)
            root = self._list_dirty("", base, dirty_paths, children, pending, skipped)
        seen: set[str] | None = set() if full else None
        self._unreadable = []
        read = self._hash_pending(pending, dirty_paths or set(), write, started, progress)
        skipped.extend(self._unreadable)
        tree, files, nbytes = self._build(root, write, seen, "")
        self._keep = seen
        if write and save_cache:
            self.statcache.save(keep=seen, keep_in=self._keep_in)
        return ScanResult(tree, files, nbytes, skipped, read)

    def _preverify(self) -> dict[str, Verified]:
        """The folders whose listing (names, and each file's stat) still matches their
        record, checked on both cores: with the CLI's early child if it checks this very
        stat cache, else with a child forked now (see ``prescan``). Empty if no fork."""
        cache = self.statcache
        workspace = str(self.workspace)
        early = prescan.take_early(workspace, str(cache.path), cache.identity)
        if cache.files < prescan.FORK_MIN_FILES:
            if early is not None:
                early.kill()
            return {}
        folders = prescan.recorded_folders(cache.dirrecs, cache.dirtrees)
        checker = early
        if checker is None and prescan.can_fork():
            checker = prescan.fork_checker(workspace, folders, cache.dirrecs)
        return checker.finish(folders, cache.dirrecs) if checker is not None else {}

    def save_cache(self) -> None:
        """Persist the stat cache of the last ``scan(save_cache=False)``."""
        self.statcache.save(keep=self._keep, keep_in=self._keep_in)

    def count(self, tree: str) -> tuple[int, int]:
        """(files, bytes) below a tree, cached by hash."""
        got = self.counts.get(tree)
        if got is None:
            files = nbytes = 0
            for entry in self.trees.get(tree).values():
                if entry.mode == DIR:
                    f, b = self.count(entry.hash)
                    files += f
                    nbytes += b
                else:
                    files += 1
                    nbytes += entry.size
            got = self.counts[tree] = (files, nbytes)
        return got

    # -- walking -------------------------------------------------------------------
    def _list(
        self,
        rel_dir: str,
        base: str | None,
        full: bool,
        dirty_paths: set[str] | None,
        dirty_dirs: set[str],
        pending: list[_Pending],
        skipped: list[dict[str, object]],
    ) -> _Dir:
        node = _Dir()
        abs_dir = self._prefix + rel_dir if rel_dir else self._root
        base_tree: Tree = self.trees.get(base) if base is not None else {}
        # a folder whose record a pre-verification found true: its names, without a listing
        pre = self._verified.pop(rel_dir, None) if self._verified else None
        listing: list[os.DirEntry[str]] = []
        sts: list[os.stat_result | None] = []
        if pre is None:
            got = self._open_listing(abs_dir, rel_dir, skipped)
            if got is None:
                return node
            listing, sts = got
        return self._list_in(node, rel_dir, abs_dir, base_tree, full, dirty_paths, dirty_dirs,
                             pending, skipped, listing, sts, pre)

    @staticmethod
    def _open_listing(abs_dir: str, rel_dir: str, skipped: list[dict[str, object]]
                      ) -> tuple[list[os.DirEntry[str]], list[os.stat_result | None]] | None:
        """A folder's entries and their ``lstat``s (None: gone meanwhile); None if the
        folder cannot be listed.

        Listed through a descriptor, each ``DirEntry.stat`` is an ``fstatat`` relative to
        it: cheaper than resolving the absolute path again for every file. All are taken
        before the descriptor is closed, and before any subfolder is listed: a deep tree
        does not hold one descriptor per level.
        """
        try:
            fd = os.open(abs_dir, _DIR_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except PermissionError as exc:
            skipped.append({"path": rel_dir or ".",
                            "reason": f"unreadable folder ({exc.strerror})"})
            return None
        try:
            with os.scandir(fd) as it:
                listing = list(it)
            sts: list[os.stat_result | None] = []
            append = sts.append
            for de in listing:
                try:
                    append(de.stat(follow_symlinks=False))
                except FileNotFoundError:
                    append(None)
            return listing, sts
        finally:
            os.close(fd)

    def _list_in(
        self,
        node: _Dir,
        rel_dir: str,
        abs_dir: str,
        base_tree: Tree,
        full: bool,
        dirty_paths: set[str] | None,
        dirty_dirs: set[str],
        pending: list[_Pending],
        skipped: list[dict[str, object]],
        listing: list[os.DirEntry[str]],
        sts: list[os.stat_result | None],
        pre: Verified | None,
    ) -> _Dir:
        """``_list`` of a folder listed with its entries' stats, or verified (``pre``)."""
        if pre is not None:
            has_rules = not (_IGNORE_SET.isdisjoint(pre[0]) and _IGNORE_SET.isdisjoint(pre[1]))
        else:
            has_rules = any(de.name in IGNORE_FILES for de in listing)
        if not has_rules:
            self.ignore.none_in(rel_dir)  # no need to try opening them
        # Files the stat cache knows were not ignored last time; if this folder's ignore
        # rules are unchanged since, they still are not: skip matching them again.
        sig = self.ignore.chain_sig(rel_dir)
        trusted = self.statcache.dirsigs.get(rel_dir) == sig
        self.statcache.new_dirsigs[rel_dir] = sig
        in_dir = self.ignore.in_dir
        cache = self.statcache
        # A full scan, and a record of this folder: one digest of every entry's stat says
        # whether all its files are as the last full scan saw them (then no look-up per file)
        recordable = trusted and dirty_paths is None and self._write
        want = cache.dirrecs.get(rel_dir) if recordable else None
        if want is not None and rel_dir in cache.dirtrees:
            if pre is not None:
                return self._reuse(node, rel_dir, want, pre[0], pre[1], pending, skipped)
            found = [st for st in sts if st is not None]
            same = prescan.matching(listing, found, want) if len(found) == len(sts) else None
            if same is not None:
                return self._reuse(node, rel_dir, want, same[0], same[1], pending, skipped)
        if pre is not None:
            # verified, but not to be trusted here after all (its ignore rules changed)
            got = self._open_listing(abs_dir, rel_dir, skipped)
            if got is None:
                return node
            listing, sts = got
        rows = cache.rows
        unpack = ROW.unpack
        seen_st: list[os.stat_result] = []
        for de, maybe_st in zip(listing, sts, strict=True):
            name = de.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if maybe_st is None:  # gone since the listing
                recordable = False
                continue
            st = maybe_st
            if recordable:
                seen_st.append(st)
            mode = st.st_mode
            if S_ISREG(mode):
                raw = rows.get(rel)
                row = unpack(raw) if raw is not None and trusted else None
                if (
                    row is not None
                    and (dirty_paths is None or rel not in dirty_paths)
                    and row[0] == st.st_size
                    and row[1] == st.st_mtime_ns
                    and row[2] == st.st_ctime_ns
                    and row[3] == st.st_ino
                    and row[4] == mode
                    and st.st_mtime_ns < row[5] - RACY_MARGIN_NS
                ):
                    node.entries[name] = Entry(FILE_MODES[mode & 0o777],
                                               row[6].hex(), st.st_size)
                    node.hits += 1
                    continue
                node.clean = False
                # a row under the same ignore rules: it was not ignored, nor is it now
                if row is None and in_dir(rel_dir, rel, name, False):
                    continue
                recordable = False
                if st.st_size > self.size_cap:
                    skipped.append({"path": rel, "reason": "larger than the size cap",
                                    "size": st.st_size})
                    continue
                if dirty_paths is None or rel not in dirty_paths:
                    digest = self.statcache.lookup(rel, st)
                    if digest is not None:
                        node.entries[name] = Entry(FILE_MODES[mode & 0o777], digest,
                                                   st.st_size)
                        continue
                node.entries[name] = _Pending(rel, os.path.join(abs_dir, name), st)
                pending.append(node.entries[name])  # type: ignore[arg-type]
                continue
            if S_ISDIR(mode):
                if not (trusted and rel in self.statcache.dirsigs) and in_dir(
                        rel_dir, rel, name, True):
                    continue
                old = base_tree.get(name)
                old_dir = old.hash if old is not None and old.mode == DIR else None
                if full or old_dir is None or (dirty_paths is not None and rel in dirty_paths):
                    node.entries[name] = self._list(rel, None, True, None, set(), pending,
                                                    skipped)
                    if rel not in cache.new_dirsigs:
                        recordable = False  # could not be listed: look again next time
                elif rel in dirty_dirs:
                    node.entries[name] = self._list(rel, old_dir, False, dirty_paths,
                                                    dirty_dirs, pending, skipped)
                else:
                    assert old is not None
                    node.entries[name] = old
                    node.clean = False
                continue
            if stat.S_ISLNK(mode):
                # links are in the stat cache too: a link is replaced, never changed in
                # place, so a matching stat means the same target
                raw = rows.get(rel)
                row = unpack(raw) if raw is not None and trusted else None
                if (row is not None and row[0] == st.st_size
                        and row[1] == st.st_mtime_ns and row[2] == st.st_ctime_ns
                        and row[3] == st.st_ino and row[4] == mode):
                    node.entries[name] = Entry(LINK, row[6].hex(), st.st_size)
                    node.hits += 1
                    continue
                node.clean = False
                if row is None and in_dir(rel_dir, rel, name, False):
                    continue
                recordable = False
                try:
                    target = os.readlink(os.path.join(abs_dir, name).encode(
                        "utf-8", "surrogateescape"))
                except OSError:
                    continue
                digest = self._put_link(target)
                if self._write:
                    self.statcache.record(rel, st, digest, self._started)
                node.entries[name] = Entry(LINK, digest, len(target))
                continue
            node.clean = False
            if in_dir(rel_dir, rel, name, False):
                continue
            recordable = False
            skipped.append({"path": rel, "reason": "not a regular file, folder or symlink"})
        if recordable:
            # every file here matched its row (or is ignored): the next full scan may take
            # them all from one digest
            cache.new_dirrecs[rel_dir] = listing_key(listing, seen_st)
        return node

    def _reuse(self, node: _Dir, rel_dir: str, want: str, files: list[str], dirs: list[str],
               pending: list[_Pending], skipped: list[dict[str, object]]) -> _Dir:
        """A folder whose listing matched its record: its files as the last full scan saw
        them (no look-up one by one); its subfolders are listed in turn."""
        cache = self.statcache
        cache.new_dirrecs[rel_dir] = want
        node.reused = files
        node.hits = len(files)
        for name in dirs:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if rel not in cache.dirsigs:
                # every folder the recorded scan listed has a signature: this one was
                # ignored then, and with the same rules and name still is
                continue
            node.entries[name] = self._list(rel, None, True, None, set(), pending, skipped)
        return node


    def _list_dirty(
        self,
        rel_dir: str,
        base: str,
        dirty_paths: set[str],
        children: dict[str, set[str]],
        pending: list[_Pending],
        skipped: list[dict[str, object]],
    ) -> _Dir:
        """A folder of the previous scan with only its dirty entries looked at again.

        ``children`` maps a folder to the names in it that changed or lead to a change;
        every other entry is taken from the base tree without a system call.
        """
        node = _Dir(clean=False, base=base, changed=frozenset(children.get(rel_dir, ())))
        node.entries.update(self.trees.get(base))
        prefix = f"{rel_dir}/" if rel_dir else ""
        for name in children.get(rel_dir, ()):
            rel = prefix + name
            try:
                st = os.lstat(os.path.join(self.workspace, rel))
            except (FileNotFoundError, NotADirectoryError):
                node.entries.pop(name, None)
                continue
            mode = st.st_mode
            if S_ISDIR(mode):
                if self.ignore.in_dir(rel_dir, rel, name, True):
                    node.entries.pop(name, None)
                    continue
                old = node.entries.get(name)
                if rel in dirty_paths or not isinstance(old, Entry) or old.mode != DIR:
                    node.entries[name] = self._list(rel, None, True, None, set(), pending,
                                                    skipped)
                else:
                    node.entries[name] = self._list_dirty(rel, old.hash, dirty_paths, children,
                                                          pending, skipped)
                continue
            node.entries.pop(name, None)
            if self.ignore.in_dir(rel_dir, rel, name, False):
                continue
            if S_ISREG(mode):
                if st.st_size > self.size_cap:
                    skipped.append({"path": rel, "reason": "larger than the size cap",
                                    "size": st.st_size})
                    continue
                item = _Pending(rel, os.path.join(self.workspace, rel), st)
                node.entries[name] = item
                pending.append(item)
            elif stat.S_ISLNK(mode):
                try:
                    target = os.readlink(os.path.join(self.workspace, rel).encode(
                        "utf-8", "surrogateescape"))
                except OSError:
                    continue
                node.entries[name] = Entry(LINK, self._put_link(target), len(target))
            else:
                skipped.append({"path": rel, "reason": "not a regular file, folder or symlink"})
        return node

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
        pending: list[_Pending],
        dirty_paths: set[str],
        write: bool,
        started: int,
        progress: Progress | None,
    ) -> int:
        if not pending:
            return 0
        total = len(pending)
        results = self._results
        unreadable = self._unreadable

        def work(p: _Pending) -> tuple[str, tuple[str, os.stat_result] | None]:
            try:
                st = os.lstat(p.abs)
                if not stat.S_ISREG(st.st_mode):
                    return p.rel, None
                if write:
                    digest = self.objects.put_file(Path(p.abs), st.st_size)
                else:
                    digest = _hash_file_only(p.abs, st.st_size)
                return p.rel, (digest, st)
            except (FileNotFoundError, IsADirectoryError):
                return p.rel, None  # gone, or a folder now: absent, as the next scan sees
            except OSError as exc:
                # there but unreadable (permissions, a name too long for the system, an
                # I/O error): reported, never taken as absent, which a rewind would delete
                unreadable.append({"path": p.rel,
                                   "reason": f"unreadable ({exc.strerror or exc})"})
                return p.rel, None

        done: list[tuple[str, tuple[str, os.stat_result] | None]] = []
        if total <= INLINE_MAX:
            # a few files (the usual checkpoint of a watched workspace): small ones are read
            # here, which costs less than handing them to a thread; big ones go to the pool
            # meanwhile, where hashing and compressing release the GIL
            big = [p for p in pending if p.st.st_size >= INLINE_BYTES]
            futures = [self._executor().submit(work, p) for p in big]
            try:
                done.extend(work(p) for p in pending if p.st.st_size < INLINE_BYTES)
                done.extend(f.result() for f in futures)
                if progress is not None:
                    progress(total, total)
            except BaseException:
                for f in futures:
                    f.cancel()
                _wait(futures)
                raise
        else:
            def work_chunk(chunk: list[_Pending]
                           ) -> list[tuple[str, tuple[str, os.stat_result] | None]]:
                return [work(p) for p in chunk]

            pool = self._executor()
            chunks = [pool.submit(work_chunk, pending[i: i + 16]) for i in range(0, total, 16)]
            try:
                n = 0
                for fut in chunks:
                    got = fut.result()
                    done.extend(got)
                    before, n = n, n + len(got)
                    if progress is not None and (n // 256 != before // 256 or n == total):
                        progress(n, total)  # may raise to cancel
            except BaseException:
                for fut in chunks:
                    fut.cancel()  # stop hashing what is left
                _wait(chunks)
                raise
        for rel, res in done:
            results[rel] = res
            if res is not None and write:
                self.statcache.record(rel, res[1], res[0], started)
        return total

    def _build(self, node: _Dir, write: bool, seen: set[str] | None, rel_dir: str
               ) -> tuple[str, int, int]:
        h, files, nbytes, _ = self._build_dir(node, write, seen, rel_dir)
        return h, files, nbytes

    def _hashed(self, item: _Pending) -> Entry | None:
        """The tree entry of a file this scan hashed; None if it could not be read as one."""
        res = self._results.get(item.rel)
        if res is None:
            return None
        digest, st = res
        return Entry(FILE_MODES[st.st_mode & 0o777], digest, st.st_size)

    def _entry_counts(self, entry: Entry) -> tuple[int, int]:
        return self.count(entry.hash) if entry.mode == DIR else (1, entry.size)

    def _patch_dir(self, node: _Dir, write: bool, rel_dir: str) -> tuple[str, int, int, bool]:
        """An incremental scan's folder: its base tree with only the changed names redone."""
        assert node.base is not None
        tree = dict(self.trees.get(node.base))
        files, nbytes = self.count(node.base)
        for name in node.changed:
            old = tree.pop(name, None)
            if old is not None:
                f, b = self._entry_counts(old)
                files -= f
                nbytes -= b
            item = node.entries.get(name)
            if item is None:
                continue
            if isinstance(item, _Dir):
                h, f, b, _ = self._build_dir(item, write, None,
                                             f"{rel_dir}/{name}" if rel_dir else name)
                if f == 0:
                    continue  # empty folders are not recorded (as in git)
                tree[name] = Entry(DIR, h, b)
                files += f
                nbytes += b
                continue
            if isinstance(item, _Pending):
                hashed = self._hashed(item)
                if hashed is None:
                    continue  # vanished or became something else mid-scan
                item = hashed
            f, b = self._entry_counts(item)
            files += f
            nbytes += b
            tree[name] = item
        h, data = self.trees.name(tree, node.base, node.changed)
        if write:
            self.trees.put_encoded(h, data)
        self.counts[h] = (files, nbytes)
        if write:
            self.statcache.new_dirtrees[rel_dir] = [h, files, nbytes, len(node.entries)]
        return h, files, nbytes, False

    def _build_dir(self, node: _Dir, write: bool, seen: set[str] | None, rel_dir: str
                   ) -> tuple[str, int, int, bool]:
        """Build (or reuse) one folder's tree; the last value says it is unchanged."""
        if node.base is not None and seen is None:
            return self._patch_dir(node, write, rel_dir)
        tree: Tree = {}
        files = nbytes = 0
        clean = node.clean
        subs: dict[str, tuple[str, int, int, bool]] = {}
        for name, item in node.entries.items():
            if isinstance(item, _Dir):
                sub = subs[name] = self._build_dir(item, write, seen,
                                                   f"{rel_dir}/{name}" if rel_dir else name)
                clean = clean and sub[3]
        prev = self.statcache.dirtrees.get(rel_dir)
        reused = node.reused
        if clean and prev is not None and (reused is not None or (
                prev[3] == len(node.entries) and node.hits == len(node.entries) - len(subs))):
            # every entry is as the last scan saw it: so is the tree
            if seen is not None:
                prefix = f"{rel_dir}/" if rel_dir else ""
                if reused is not None:
                    self._keep_in.append((prefix, reused))  # made into paths only if needed
                else:
                    seen.update(prefix + n for n, it in node.entries.items()
                                if not isinstance(it, _Dir))
            self.statcache.new_dirtrees[rel_dir] = prev
            self.counts[prev[0]] = (prev[1], prev[2])
            return prev[0], prev[1], prev[2], True
        n_entries = len(node.entries)
        if reused is not None:
            # the files are those of the last full scan's tree; only folders below changed
            assert prev is not None
            prefix = f"{rel_dir}/" if rel_dir else ""
            for name, entry in self.trees.get(prev[0]).items():
                if entry.mode != DIR:
                    tree[name] = entry
                    files += 1
                    nbytes += entry.size
                    n_entries += 1
                    if seen is not None:
                        seen.add(prefix + name)
        for name, item in node.entries.items():
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if isinstance(item, _Dir):
                h, f, b, _ = subs[name]
                if f == 0:
                    continue  # empty folders are not recorded (as in git)
                tree[name] = Entry(DIR, h, b)
                files += f
                nbytes += b
                continue
            if isinstance(item, _Pending):
                hashed = self._hashed(item)
                if hashed is None:
                    continue  # vanished or became something else mid-scan
                item = hashed
            if item.mode == DIR:
                f, b = self.count(item.hash)
                files += f
                nbytes += b
            else:
                files += 1
                nbytes += item.size
                if seen is not None:
                    seen.add(rel)
            tree[name] = item
        h, data = self.trees.name(tree, node.base, node.changed)
        if write and (prev is None or prev[0] != h):
            # unchanged trees are known to be stored: no look-up among all objects
            self.trees.put_encoded(h, data)
        self.counts[h] = (files, nbytes)
        if write:
            self.statcache.new_dirtrees[rel_dir] = [h, files, nbytes, n_entries]
        return h, files, nbytes, False
