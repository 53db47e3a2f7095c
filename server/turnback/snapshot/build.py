"""From a scan's folder nodes to tree objects: unchanged folders keep their tree (from the
stat cache or the base of an incremental scan), changed ones are encoded anew."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..objects.objectstore import is_hash
from ..objects.trees import DIR, Entry, Tree

if TYPE_CHECKING:
    pass

from .hashing import Hashing
from .nodes import Built, DirNode, Pending


class TreeBuilding(Hashing):
    """The tree building of a ``Scanner``."""

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

    def _stored(self, tree: str) -> bool:
        """Whether the store holds ``tree``, a folder's tree the stat cache names. That file
        is input: a planted one (or one copied from another store) naming a tree never
        stored made a no-op commit a checkpoint no rewind could read (redteam32). A look
        in the object index, never a read (bench/RESULTS.md, ``store27``)."""
        return is_hash(tree) and self.objects.exists(tree)

    def _stored_root(self) -> bool:
        """``_stored_record("")``, taken as held without a look-up when the recorded root is
        the tree the last checkpoint names (``held_root``): the usual no-op's case. A root
        that differs (a planted cache's) is looked up as any other record."""
        rec = self.statcache.dirtrees.get("")
        if rec is not None and self.held_root is not None and rec[0] == self.held_root():
            return True
        return self._stored_record("")

    def _stored_record(self, rel_dir: str) -> bool:
        """Whether ``rel_dir`` has a recorded tree the store holds; one it does not hold is
        forgotten (the folder is then walked and its tree built anew)."""
        rec = self.statcache.dirtrees.get(rel_dir)
        if rec is None:
            return False
        if self._stored(rec[0]):
            return True
        del self.statcache.dirtrees[rel_dir]
        return False

    def _build(self, node: DirNode, write: bool, full: bool, rel_dir: str
               ) -> tuple[str, int, int]:
        h, files, nbytes, _ = self._build_dir(node, write, full, rel_dir)
        return h, files, nbytes

    def _entry_counts(self, entry: Entry) -> tuple[int, int]:
        return self.count(entry.hash) if entry.mode == DIR else (1, entry.size)

    def _patch_dir(self, node: DirNode, write: bool, rel_dir: str) -> tuple[str, int, int, bool]:
        """An incremental scan's folder: its base tree with only the changed names redone."""
        assert node.base is not None
        tree = dict(self.trees.get(node.base))
        files, nbytes = self.count(node.base)
        # the folder's entries as listed: the base's, with the changed names as found now
        n_entries = len(tree)
        for name in node.changed:
            n_entries += (name in node.entries) - (name in tree)
        for name in node.changed:
            old = tree.pop(name, None)
            if old is not None:
                f, b = self._entry_counts(old)
                files -= f
                nbytes -= b
            item = node.entries.get(name)
            if item is None:
                continue
            if isinstance(item, DirNode):
                h, f, b, _ = self._build_dir(item, write, False,
                                             f"{rel_dir}/{name}" if rel_dir else name)
                if f == 0:
                    continue  # empty folders are not recorded (as in git)
                tree[name] = Entry(DIR, h, b)
                files += f
                nbytes += b
                continue
            if isinstance(item, Pending):
                hashed = self._hashed(item)
                if hashed is None:
                    continue  # vanished or became something else mid-scan
                item = hashed
            assert not isinstance(item, Built)  # only a streaming (full) scan builds ahead
            f, b = self._entry_counts(item)
            files += f
            nbytes += b
            tree[name] = item
        h, data = self.trees.name(tree, node.base, node.changed)
        if write:
            self.trees.put_encoded(h, data)
        self.counts[h] = (files, nbytes)
        if write:
            self.statcache.new_dirtrees[rel_dir] = [h, files, nbytes, n_entries]
        return h, files, nbytes, False

    def _build_dir(self, node: DirNode, write: bool, full: bool, rel_dir: str
                   ) -> tuple[str, int, int, bool]:
        """Build (or reuse) one folder's tree; the last value says it is unchanged.

        ``full``: a full scan's, which settles the folder's stat cache rows (keeping those
        of the files it found, ``StatCache.settle``)."""
        if node.base is not None and not full:
            return self._patch_dir(node, write, rel_dir)
        tree: Tree = {}
        files = nbytes = 0
        clean = node.clean
        subs: dict[str, tuple[str, int, int, bool]] = {}
        for name, item in node.entries.items():
            if isinstance(item, DirNode):
                sub = subs[name] = self._build_dir(item, write, full,
                                                   f"{rel_dir}/{name}" if rel_dir else name)
                clean = clean and sub[3]
            elif isinstance(item, Built):  # a streaming scan built it already
                subs[name] = (item.hash, item.files, item.nbytes, item.clean)
                clean = clean and item.clean
        prev = self.statcache.dirtrees.get(rel_dir)
        reused = node.reused
        # a reused folder's tree was looked up in the store when its record was taken
        # (``_stored_record``); any other recorded tree is looked up here
        if clean and prev is not None and (reused or (
                prev[3] == len(node.entries) and node.hits == len(node.entries) - len(subs)
                and self._stored(prev[0]))):
            # every entry is as the last scan saw it: so is the tree
            if full:
                self.statcache.settle(rel_dir, None if reused else [
                    n for n, it in node.entries.items() if not isinstance(it, (DirNode, Built))])
            self.statcache.new_dirtrees[rel_dir] = prev
            self.counts[prev[0]] = (prev[1], prev[2])
            node.entries = {}  # built: what the walk held for it can go (bounded memory)
            return prev[0], prev[1], prev[2], True
        n_entries = len(node.entries)
        names: list[str] = []  # of the files found here (``full``)
        if reused:
            # the files are those of the last full scan's tree; only folders below changed
            assert prev is not None
            for name, entry in self.trees.get(prev[0], remember=not (full and write)).items():
                if entry.mode != DIR:
                    tree[name] = entry
                    files += 1
                    nbytes += entry.size
                    n_entries += 1
                    names.append(name)
        for name, item in node.entries.items():
            if isinstance(item, (DirNode, Built)):
                h, f, b, _ = subs[name]
                if f == 0:
                    continue  # empty folders are not recorded (as in git)
                tree[name] = Entry(DIR, h, b)
                files += f
                nbytes += b
                continue
            if isinstance(item, Pending):
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
                names.append(name)
            tree[name] = item
        h, data = self.trees.name(tree, node.base, node.changed,
                                     remember=not (full and write))
        if write and (prev is None or prev[0] != h or not (reused or self._stored(h))):
            # a tree the (looked-up) record names is stored: not put again
            self.trees.put_encoded(h, data)
        self.counts[h] = (files, nbytes)
        if write:
            self.statcache.new_dirtrees[rel_dir] = [h, files, nbytes, n_entries]
        if full:
            self.statcache.settle(rel_dir, names)
        node.entries = {}  # built: what the walk held for it can go (bounded memory)
        return h, files, nbytes, False
