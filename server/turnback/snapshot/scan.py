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
import time
from collections.abc import Iterable
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING

from ..fs.folders import is_link
from ..fs.osflags import DESCRIPTORS, O_CLOEXEC, O_DIRECTORY
from ..objects.trees import DIR, LINK, STAT_MODES, Entry, Tree
from . import prescan
from .changedpaths import changed_paths
from .ignore import IGNORE_FILES
from .prescan import Verified, listing_key
from .statcache import COARSE_MARGIN_NS, RACY_MARGIN_NS, ROW, SECOND_NS

if TYPE_CHECKING:
    pass

from .build import TreeBuilding
from .hashing import INLINE_MAX
from .nodes import Built, DirNode, Looked, PastBound, Pending, Progress, ScanResult

_DIR_FLAGS = os.O_RDONLY | O_DIRECTORY | O_CLOEXEC
# Folders nested deeper than this are left out of checkpoints (in the scan's ``skipped``,
# which a rewind leaves alone, as an unreadable folder). The walk recurses three frames a
# folder on every path, reused folders too (tests/snapshot/test_deep_folders.py holds it
# to that): 600 nested folders (one ``mkdir -p``) overran Python's recursion limit of
# 1,000 and failed every checkpoint of the workspace. 255 keeps the walk under ~770 frames,
# with room for a server's or a script's own below it; trees read back allow 512.
MAX_SCAN_DEPTH = 255


def _too_deep(rel_dir: str, skipped: list[dict[str, object]]) -> bool:
    """Whether ``rel_dir`` is past ``MAX_SCAN_DEPTH`` (then said in ``skipped``)."""
    if rel_dir.count("/") < MAX_SCAN_DEPTH:
        return False
    skipped.append({"path": rel_dir,
                    "reason": f"nested more than {MAX_SCAN_DEPTH} folders deep"})
    return True


class Scanner(TreeBuilding):
    """Snapshots one workspace (see the module's docstring)."""

    def scan(
        self,
        *,
        base: str | None = None,
        dirty: Iterable[str] | None = None,
        write: bool = True,
        progress: Progress | None = None,
        save_cache: bool = True,
        bound: int | None = None,
    ) -> ScanResult:
        """Snapshot the workspace; with ``base`` and ``dirty``, only around the dirty paths.

        ``save_cache=False`` leaves the stat cache file to ``save_cache()``, which a
        checkpoint calls once the objects the scan wrote are committed.

        ``bound``: the scan reads at most this many bytes of files, as their own ``lstat``
        in the listing saw them (each read stops there: a file grown since is read as far
        as that size), and lists no folder whole; else ``PastBound`` before any file is
        read (a link's blob put meanwhile goes with the caller's aborted batch). One look a
        changed path bounds and feeds the read alike (``Store.checkpoint_now``).
        """
        self.statcache.load()
        self.statcache.forget_unsaved_trees()
        self.statcache.new_dirrecs = {}  # filled by this scan's folders alone
        started = time.time_ns()
        skipped: list[dict[str, object]] = []
        pending: list[Pending] = []
        dirty_paths: set[str] | None = None
        dirty_dirs: set[str] = set()
        if dirty is not None and base is not None:
            dirty_paths = changed_paths(dirty)  # one spelling a file: ``./f`` is ``f``
            if dirty_paths is not None and any(
                    p.rsplit("/", 1)[-1] in IGNORE_FILES for p in dirty_paths):
                dirty_paths = None  # the ignore rules changed: every path is in question
        if dirty_paths is None:
            self.ignore.forget()  # a full scan reads the ignore files afresh
        else:
            for p in dirty_paths:
                parts = p.split("/")
                for i in range(len(parts)):
                    dirty_dirs.add("/".join(parts[:i]))
        full = dirty_paths is None
        if full and bound is not None:
            raise PastBound("a walk of the whole workspace")  # an ignore file changed
        if not full and base is not None and not dirty_paths:
            # nothing changed since the scan that built ``base`` (a watcher said so): the
            # same tree, without a system call
            self._keep_full = False
            files, nbytes = self.count(base)
            return ScanResult(base, files, nbytes)
        self._write = write
        self._started = started
        self._results = {}
        self._unreadable = []
        if full or base is None:
            if write and (self.worker is not None
                          or (self.fork_verify and self.before_listing is None)):
                self._verified = self._preverify()
            self.statcache.begin_full()
            self._streaming, self._progress = True, progress
            self._submitted = self._done = 0
            try:
                built = (self._taken_whole() if self._verified else None) or self._list(
                    "", None, True, None, set(), pending, skipped)
            except BaseException:
                self._cancel_open()
                self._results = {}
                raise
            finally:
                self._verified = {}
                self._streaming, self._progress = False, None
            assert isinstance(built, Built)
            if progress is not None and self._submitted:
                progress(self._done, self._submitted)
            skipped.extend(self._unreadable)
            self._keep_full = True
            if write and save_cache:
                self.statcache.save(full=True)
            return ScanResult(built.hash, built.files, built.nbytes, skipped, self._submitted)
        else:
            assert dirty_paths is not None
            children: dict[str, set[str]] = {}  # folder -> names in it on a dirty path
            for p in dirty_paths:
                parts = p.split("/")
                for i, part in enumerate(parts):
                    children.setdefault("/".join(parts[:i]), set()).add(part)
            self._bytes_left = bound
            try:
                root = self._list_dirty("", base, dirty_paths, children, pending, skipped)
            finally:
                self._bytes_left = None
        assert isinstance(root, DirNode)
        read = self._hash_pending(pending, dirty_paths or set(), write, started, progress)
        skipped.extend(self._unreadable)
        tree, files, nbytes = self._build(root, write, False, "")
        self._keep_full = False
        if write and save_cache:
            self.statcache.save()
        return ScanResult(tree, files, nbytes, skipped, read)

    def _preverify(self) -> dict[str, Verified]:
        """The folders whose listing (names, and each file's stat) still matches their
        record, checked on both cores: with the CLI's early child if it checks this very
        stat cache, or the server's worker, else with a child forked now (see
        ``prescan``). Empty if no fork. With ``before_listing`` set only a worker helps
        (its child calls the same before listing; the others' children do not)."""
        cache = self.statcache
        workspace = str(self.workspace)
        worker, self.worker = self.worker, None
        early = prescan.take_early(workspace, str(cache.path), cache.identity)
        told = self.before_listing
        if early is not None and (told is not None or cache.files < prescan.FORK_MIN_FILES):
            early.kill()
            early = None
        if cache.files < prescan.FORK_MIN_FILES:
            if worker is not None:
                worker.kill()
            return {}
        folders = prescan.recorded_folders(cache.dirrecs, cache.dirtrees)
        # the folders a check can verify: a record of no entries never is (``_taken_whole``)
        self._recorded = len(folders) - sum(
            cache.dirrecs[rel] == prescan.EMPTY_RECORD for rel in folders)
        checker = early
        if checker is None and worker is not None:
            checker = worker.start(workspace, folders, cache.dirrecs, str(cache.path),
                                   cache.identity)
        elif checker is None and told is None and prescan.can_fork():
            checker = prescan.fork_checker(workspace, folders, cache.dirrecs)
        elif worker is not None:
            worker.kill()
        return checker.finish(folders, cache.dirrecs, told) if checker is not None else {}

    def _taken_whole(self) -> Built | None:
        """The walk's verified case for the whole workspace at once: its recorded tree, if
        every recorded folder was verified (``_preverify``: its names and each entry's
        ``lstat`` digest to its record) and, from the top down through each verified
        folder's recorded subfolders, every folder the walk would enter is one of them (or
        recorded empty and listed empty again here, as the walk lists it),
        within ``MAX_SCAN_DEPTH``, with a recorded tree, and its ignore rules' chain
        signature, made now as the walk makes it (settings, the store's place, git's
        ``info/exclude`` and global excludes, every ignore file on the way read afresh),
        equal to the recorded one. What the walk's ~10 calls a verified folder would leave
        in the stat cache (record, signature, tree, rows kept) is then laid in one pass
        (bench/RESULTS.md, "the cold no-op's imports and tail"). None at the first folder
        that fails: the walk does it all (the ignore files read here stay cached)."""
        verified, cache, ignore = self._verified, self.statcache, self.ignore
        if len(verified) < self._recorded or self.before_listing is not None:
            return None  # a record did not hold
        sigs, trees = cache.dirsigs, cache.dirtrees
        reached: dict[str, str] = {}  # folder -> its signature now
        empty: list[str] = []  # reached folders recorded empty, listed empty now
        todo = [""]
        while todo:
            rel = todo.pop()
            pre = verified.get(rel)
            if pre is None and cache.dirrecs.get(rel) == prescan.EMPTY_RECORD:
                abs_dir = self._prefix + rel if rel else self._root
                if self._open_listing(abs_dir, rel, []) != ([], []):
                    return None  # no longer empty, or gone, or unreadable: the walk says
                pre = (0, [], False)
                empty.append(rel)
            if pre is None or rel not in trees or rel.count("/") >= MAX_SCAN_DEPTH:
                return None
            if not pre[2]:
                ignore.none_in(rel)  # no ignore file here (the check saw its names)
            sig = reached[rel] = ignore.chain_sig(rel)
            if sigs.get(rel) != sig:
                return None
            prefix = f"{rel}/" if rel else ""
            # a subfolder without a signature was ignored then, and still is (``_reuse``)
            todo.extend(sub for name in pre[1] if (sub := prefix + name) in sigs)
        if not self._stored_root():
            return None  # the answer would name a tree the store lacks: the walk builds it
        # in the recorded order (the next check's), as the walk would leave them
        cache.new_dirsigs = {rel: sig for rel, sig in sigs.items() if rel in reached}
        cache.new_dirrecs = {rel: rec for rel, rec in cache.dirrecs.items() if rel in reached}
        cache.new_dirtrees = {rel: tree for rel, tree in trees.items() if rel in reached}
        self.counts.update((h, (files, nbytes))
                           for h, files, nbytes, _entries in cache.new_dirtrees.values())
        cache.settle_whole(reached)
        for rel in empty:  # as the walk settles a folder it listed: no row kept there
            cache.folder_rows(rel)
            cache.settle(rel, [])
        self._verified = {}
        root = trees[""]
        return Built(root[0], root[1], root[2], True)

    def save_cache(self) -> None:
        """Persist the stat cache of the last ``scan(save_cache=False)``."""
        self.statcache.save(full=self._keep_full)

    def _list(
        self,
        rel_dir: str,
        base: str | None,
        full: bool,
        dirty_paths: set[str] | None,
        dirty_dirs: set[str],
        pending: list[Pending],
        skipped: list[dict[str, object]],
    ) -> DirNode | Built:
        """A folder listed (the nodes below it too); a streaming scan's, built already."""
        if self._streaming:
            own: list[Pending] = []  # this folder's files (``_list_in`` sends them to hash)
            node = self._list_node(rel_dir, base, full, dirty_paths, dirty_dirs, own, skipped)
            futures = self._open.pop() if node.futures else []
            self._collect(futures)
            h, files, nbytes, clean = self._build_dir(node, self._write, True, rel_dir)
            return Built(h, files, nbytes, clean)
        return self._list_node(rel_dir, base, full, dirty_paths, dirty_dirs, pending, skipped)

    def _list_node(
        self,
        rel_dir: str,
        base: str | None,
        full: bool,
        dirty_paths: set[str] | None,
        dirty_dirs: set[str],
        pending: list[Pending],
        skipped: list[dict[str, object]],
    ) -> DirNode:
        node = DirNode()
        if _too_deep(rel_dir, skipped):
            return node
        abs_dir = self._prefix + rel_dir if rel_dir else self._root
        base_tree: Tree = self.trees.get(base) if base is not None else {}
        told = self.before_listing
        # True: the folder changed after a listing made before this walk could see it
        stale = told(rel_dir) if told is not None else None
        # a folder whose record a pre-verification found true: its names, without a listing
        pre = self._verified.pop(rel_dir, None) if self._verified else None
        if stale:
            pre = None  # listed again here
        if pre is None and full and dirty_paths is None and self._write:
            pre = self._compiled_check(abs_dir, rel_dir)
        listing: list[os.DirEntry[str]] = []
        sts: list[os.stat_result | None] = []
        if pre is None:
            got = self._open_listing(abs_dir, rel_dir, skipped)
            if got is None:
                return node
            listing, sts = got
        return self._list_in(node, rel_dir, abs_dir, base_tree, full, dirty_paths, dirty_dirs,
                             pending, skipped, listing, sts, pre)

    def _compiled_check(self, abs_dir: str, rel_dir: str) -> Verified | None:
        """A recorded folder checked by the compiled ``folder_parts`` before any listing
        in Python (``prescan``): its ``Verified`` if its record still holds, else None
        (the walk then lists it). Where that module was not built, always None."""
        compiled = prescan.compiled_parts
        cache = self.statcache
        want = cache.dirrecs.get(rel_dir)
        if (compiled is None or not DESCRIPTORS or want is None
                or rel_dir not in cache.dirtrees):
            return None
        try:
            fd = os.open(abs_dir, _DIR_FLAGS)  # as ``_open_listing`` opens it
        except OSError:
            return None  # the listing says what is wrong
        try:
            return prescan.parts_matching(compiled(fd), want)
        finally:
            os.close(fd)

    @staticmethod
    def _open_listing(abs_dir: str, rel_dir: str, skipped: list[dict[str, object]]
                      ) -> tuple[list[os.DirEntry[str]], list[os.stat_result | None]] | None:
        """A folder's entries and their ``lstat``s (None: gone meanwhile); None if the
        folder cannot be listed.

        Listed through a descriptor, each ``DirEntry.stat`` is an ``fstatat`` relative to
        it: cheaper than resolving the absolute path again for every file. All are taken
        before the descriptor is closed, and before any subfolder is listed: a deep tree
        does not hold one descriptor per level. Where descriptors are missing (Windows),
        listed by path: the stats come with the listing there (``FindNextFile``).
        """
        if not DESCRIPTORS:
            return Scanner._listing_by_path(abs_dir, rel_dir, skipped)
        try:
            fd = os.open(abs_dir, _DIR_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:  # no permission; or nested past PATH_MAX, a link loop, EIO
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

    @staticmethod
    def _listing_by_path(abs_dir: str, rel_dir: str, skipped: list[dict[str, object]]
                         ) -> tuple[list[os.DirEntry[str]], list[os.stat_result | None]] | None:
        """``_open_listing`` where folders have no descriptors: ``scandir`` by path, then
        the folder looked at again (not a link now: what was listed was no link either,
        unless swapped there and back meanwhile, docs/RELIABILITY.md "Windows")."""
        try:
            with os.scandir(abs_dir) as it:
                listing = list(it)
            sts: list[os.stat_result | None] = []
            for de in listing:
                try:
                    sts.append(de.stat(follow_symlinks=False))
                except FileNotFoundError:
                    sts.append(None)
            st = os.lstat(abs_dir)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            skipped.append({"path": rel_dir or ".",
                            "reason": f"unreadable folder ({exc.strerror})"})
            return None
        if rel_dir and (is_link(st) or not stat.S_ISDIR(st.st_mode)):
            skipped.append({"path": rel_dir, "reason": "replaced by a link while listed"})
            return None
        return listing, sts

    def _list_in(
        self,
        node: DirNode,
        rel_dir: str,
        abs_dir: str,
        base_tree: Tree,
        full: bool,
        dirty_paths: set[str] | None,
        dirty_dirs: set[str],
        pending: list[Pending],
        skipped: list[dict[str, object]],
        listing: list[os.DirEntry[str]],
        sts: list[os.stat_result | None],
        pre: Verified | None,
    ) -> DirNode:
        """``_list`` of a folder listed with its entries' stats, or verified (``pre``)."""
        if pre is not None:
            has_rules = pre[2]
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
        if want is not None and self._stored_record(rel_dir):
            reused: list[tuple[str, str]] | None = None
            if pre is not None:
                reused = self._reuse(node, rel_dir, want, pre[0], pre[1])
            else:
                found = [st for st in sts if st is not None]
                same = (prescan.matching(listing, found, want) if len(found) == len(sts)
                        else None)
                if same is not None:
                    reused = self._reuse(node, rel_dir, want, same[0], same[1])
            if reused is not None:
                # listed from this frame, not from ``_reuse``'s: three frames a folder on
                # every path, which ``MAX_SCAN_DEPTH`` counts on (four failed at 255)
                for name, rel in reused:
                    node.entries[name] = self._list(rel, None, True, None, set(), pending,
                                                    skipped)
                return node
        if pre is not None:
            # verified, but not to be trusted here after all (its ignore rules changed)
            got = self._open_listing(abs_dir, rel_dir, skipped)
            if got is None:
                return node
            listing, sts = got
        rows = cache.folder_rows(rel_dir)
        unpack = ROW.unpack
        seen_st: list[os.stat_result] = []
        streaming = self._streaming
        subdirs: list[str] = []  # a streaming scan lists them once its files are sent
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
                    # ``settled_before`` inline, the test most files pass first: no call
                    # and no more work a file than the 50 ms margin alone (redteam32)
                    and (st.st_mtime_ns < row[5] - COARSE_MARGIN_NS
                         or (st.st_mtime_ns % SECOND_NS != 0
                             and st.st_mtime_ns < row[5] - RACY_MARGIN_NS))
                ):
                    node.entries[name] = Entry(STAT_MODES[mode & 0o777],
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
                        node.entries[name] = Entry(STAT_MODES[mode & 0o777], digest,
                                                   st.st_size)
                        continue
                item = node.entries[name] = Pending(rel, st.st_size)
                pending.append(item)
                continue
            # (where folders have no descriptors, a junction is no folder to enter)
            if S_ISDIR(mode) and (DESCRIPTORS or not is_link(st)):
                if not (trusted and rel in self.statcache.dirsigs) and in_dir(
                        rel_dir, rel, name, True):
                    continue
                if streaming:
                    subdirs.append(name)
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
        if streaming:
            # the files hash on the pool while the folders below are walked
            if pending:
                node.futures = True
                self._open.append(self._submit(pending))
            for name in subdirs:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                node.entries[name] = self._list(rel, None, True, None, set(), pending, skipped)
                if rel not in cache.new_dirsigs:
                    recordable = False  # could not be listed: look again next time
        if recordable:
            # every file here matched its row (or is ignored): the next full scan may take
            # them all from one digest
            key = listing_key(listing, seen_st)
            if key is not None:
                cache.new_dirrecs[rel_dir] = key
        return node

    def _reuse(self, node: DirNode, rel_dir: str, want: str, files: int, dirs: list[str]
               ) -> list[tuple[str, str]]:
        """A folder whose listing matched its record: its ``files`` as the last full scan
        saw them (no look-up one by one); its subfolders to list in turn (name, path)."""
        cache = self.statcache
        cache.new_dirrecs[rel_dir] = want
        node.reused = True
        node.hits = files
        subs: list[tuple[str, str]] = []
        for name in dirs:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if rel not in cache.dirsigs:
                # every folder the recorded scan listed has a signature: this one was
                # ignored then, and with the same rules and name still is
                continue
            subs.append((name, rel))
        return subs

    def _list_dirty(
        self,
        rel_dir: str,
        base: str,
        dirty_paths: set[str],
        children: dict[str, set[str]],
        pending: list[Pending],
        skipped: list[dict[str, object]],
    ) -> DirNode:
        """A folder of the previous scan with only its dirty entries looked at again.

        ``children`` maps a folder to the names in it that changed or lead to a change;
        every other entry is taken from the base tree without a system call.
        """
        if _too_deep(rel_dir, skipped):
            return DirNode()
        node = DirNode(clean=False, base=base, changed=frozenset(children.get(rel_dir, ())))
        # only the changed names go into ``entries``: the rest is the base tree's, read again
        # when the folder is built (a copy of every folder's entries on the paths to 10,000
        # changed files, held until the whole tree was built, was most of a 500,000-file
        # server's peak in a rewind of them)
        base_tree = self.trees.get(base)
        prefix = f"{rel_dir}/" if rel_dir else ""
        root = self._prefix
        # a few changed files keep the stat that found them (read without another); many
        # would hold 0.6 KB a file until read (a branch switch of 100,000: 64 MB). A
        # bounded scan's keep theirs: the read stops at the size the bound admitted
        keep_stat = len(dirty_paths) <= INLINE_MAX or self._bytes_left is not None
        for name in children.get(rel_dir, ()):
            rel = prefix + name
            try:
                st = os.lstat(root + rel)
            except (FileNotFoundError, NotADirectoryError):
                node.entries.pop(name, None)
                continue
            mode = st.st_mode
            if S_ISDIR(mode) and (DESCRIPTORS or not is_link(st)):
                if self.ignore.in_dir_again(rel_dir, rel, name, True):
                    node.entries.pop(name, None)
                    continue
                old = base_tree.get(name)
                if rel in dirty_paths or not isinstance(old, Entry) or old.mode != DIR:
                    if self._bytes_left is not None:  # a tree moved in: read whole
                        raise PastBound(f"{rel} is a folder to list whole")
                    self.ignore.forget_below(rel)  # its ignore files may be new too
                    node.entries[name] = self._list(rel, None, True, None, set(), pending,
                                                    skipped)
                else:
                    node.entries[name] = self._list_dirty(rel, old.hash, dirty_paths, children,
                                                          pending, skipped)
                continue
            node.entries.pop(name, None)
            if self.ignore.in_dir_again(rel_dir, rel, name, False):
                continue
            if S_ISREG(mode):
                if st.st_size > self.size_cap:
                    skipped.append({"path": rel, "reason": "larger than the size cap",
                                    "size": st.st_size})
                    continue
                if self._bytes_left is not None:
                    self._bytes_left -= st.st_size
                    if self._bytes_left < 0:
                        raise PastBound(f"{rel}: the changed files are past the bound")
                item = Looked(rel, st.st_size, st) if keep_stat else Pending(rel, st.st_size)
                node.entries[name] = item
                pending.append(item)
            elif stat.S_ISLNK(mode):
                try:
                    target = os.readlink((root + rel).encode("utf-8", "surrogateescape"))
                except OSError:
                    continue
                node.entries[name] = Entry(LINK, self._put_link(target), len(target))
            else:
                skipped.append({"path": rel, "reason": "not a regular file, folder or symlink"})
        return node
