"""Directory listings (tree objects): the Merkle structure of a checkpoint.

A tree lists one folder: ``<mode> <hash> <size> <name>\\0`` per entry, sorted by
name bytes. Modes: ``f`` file (permissions 0644), ``x`` executable file (0755),
``pNNN`` a file with any other permission bits (octal, e.g. ``p600``; format 2),
``l`` symlink (the blob holds the link target), ``d`` folder (the hash names
another tree). A folder that did not change keeps its hash, so checkpoints share it.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from ..errors import StoreDamaged, Unsafe
from ..fs.osflags import POSIX_MODES
from .objectstore import TREE, ObjectStore, damaged_name, hash_bytes

FILE = "f"
EXEC = "x"
LINK = "l"
DIR = "d"
MODES = (FILE, EXEC, LINK, DIR)
# A file's mode by its permission bits (st_mode & 0o777): the two usual ones keep the
# one-letter modes of format 1, so trees of such files hash as they always did.
FILE_MODES: tuple[str, ...] = tuple(
    FILE if p == 0o644 else EXEC if p == 0o755 else f"p{p:03o}" for p in range(0o1000))
VALID_MODES = frozenset((*MODES, *FILE_MODES))
# A file's mode as a checkpoint records it, by st_mode & 0o777. Where there are no POSIX
# permission bits (Windows: stat says 0o666, or 0o444 for a read-only file, whatever the
# file was), a writable file is FILE and a read-only one p444, so a checkpoint taken there
# does not differ in every file's mode from one taken on Linux or macOS. (An executable
# bit, which Windows does not keep, is not seen there: docs/RELIABILITY.md, "Windows".)
STAT_MODES: tuple[str, ...] = FILE_MODES if POSIX_MODES else tuple(
    FILE if p & 0o200 else "p444" for p in range(0o1000))
# Bounds a damaged (or crafted) tree cannot make a reader exceed. Real ones are far below:
# Linux paths end at 4096 bytes, and Python's recursion limit (1000) sits above MAX_DEPTH.
MAX_DEPTH = 512  # folders nested in one checkpoint
MAX_ENTRIES = 1 << 20  # entries of one folder
MAX_FILES = 1 << 22  # files one walk yields (4,194,304): a tree naming the same subtree
# many times over is small on disk but would flatten to billions of paths
_is_name = re.compile(r"[0-9a-f]{64}").fullmatch
_HEX = b"0123456789abcdef"


def file_mode(st_mode: int) -> str:
    """The tree mode of a regular file with this ``st_mode``."""
    return STAT_MODES[st_mode & 0o777]


def permissions(mode: str) -> int:
    """The permission bits a file of tree mode ``mode`` is restored with."""
    if mode == FILE:
        return 0o644
    if mode == EXEC:
        return 0o755
    return int(mode[1:], 8)


def is_executable(mode: str) -> bool:
    return mode not in (LINK, DIR) and bool(permissions(mode) & 0o100)


class Entry(NamedTuple):
    mode: str
    hash: str
    size: int


Tree = dict[str, Entry]  # name (os.fsdecode'd) -> entry


def check_name(name: str, where: str) -> None:
    """A tree entry name must be one path component: refuse anything that could escape."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise Unsafe(f"tree {where} has an entry named {name!r}, which is not a plain file name")


_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()
_FAST = _FS_ENCODING.lower().replace("-", "") == "utf8"
_BAD_NAMES = frozenset(("", ".", ".."))


def _encode_slow(tree: Tree) -> bytes:
    items = sorted(((os.fsencode(n), e) for n, e in tree.items()), key=lambda t: t[0])
    return b"".join(
        f"{e.mode} {e.hash} {e.size} ".encode() + name + b"\0" for name, e in items
    )


def encode(tree: Tree) -> bytes:
    if not _FAST:
        return _encode_slow(tree)
    # UTF-8 keeps code point order, so sorting the str names sorts their bytes; only a
    # name holding undecodable bytes (surrogate escapes) breaks that: the strict encode
    # below refuses those, and the slow path sorts by bytes.
    text = "".join([f"{e[0]} {e[1]} {e[2]} {n}\0" for n, e in sorted(tree.items())])
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _encode_slow(tree)


def decode(data: bytes, where: str) -> Tree:
    return decode_lines(data, where)[0]


def decode_lines(data: bytes, where: str) -> tuple[Tree, list[str] | None]:
    """A tree and, when they are what ``TreeReader.name`` would write for it, its lines.

    The lines (``<mode> <hash> <size> <name>``, sorted by name) let a checkpoint that
    changes a few names of a folder read from the store redo only those lines; they are
    None for an encoding that is not strict UTF-8 in sorted order (a surrogate name, or
    a tree another writer made), which ``name`` then encodes from scratch.
    """
    tree: Tree = {}
    if not data:
        return tree, None
    if not _FAST:
        return _decode_slow(data, where), None
    try:
        text = data.decode("utf-8")
        strict = True
    except UnicodeDecodeError:
        text = data.decode("utf-8", _FS_ERRORS)
        strict = False
    parts = text.split("\0")
    if parts[-1] != "":
        raise StoreDamaged(f"tree {where} is truncated")
    parts.pop()
    if len(parts) > MAX_ENTRIES:
        raise _too_many(where)
    modes = VALID_MODES
    hashes: list[str] = []
    add = hashes.append
    new = tuple.__new__  # no Python frame per entry (a namedtuple's __new__ and _make have one)
    try:
        for raw in parts:
            mode, h, size, name = raw.split(" ", 3)
            if mode not in modes or name in _BAD_NAMES or "/" in name or len(h) != 64:
                return _decode_slow(data, where), None  # names the fault precisely
            add(h)
            tree[name] = new(Entry, (mode, h, int(size)))
    except ValueError:
        return _decode_slow(data, where), None
    # every hash lowercase hex, checked for the whole folder at once (a regex per entry
    # cost 60 ms more per 50,000 files; this costs about 8)
    if "".join(hashes).encode("ascii", "replace").translate(None, _HEX):
        return _decode_slow(data, where), None
    if not strict or len(tree) != len(parts):
        return tree, None
    names = list(tree)
    return tree, (parts if sorted(names) == names else None)


def _too_many(where: str) -> StoreDamaged:
    return StoreDamaged(f"tree {where} has more than {MAX_ENTRIES} entries, more than any "
                        "folder Turnback records; the store is damaged: run 'turnback fsck'")


def _decode_slow(data: bytes, where: str) -> Tree:
    tree: Tree = {}
    parts = data.split(b"\0")
    if parts[-1] != b"":
        raise StoreDamaged(f"tree {where} is truncated; run 'turnback fsck'")
    if len(parts) > MAX_ENTRIES + 1:
        raise _too_many(where)
    for raw in parts[:-1]:
        try:
            mode_b, hash_b, size_b, name_b = raw.split(b" ", 3)
            mode = mode_b.decode()
            if mode not in VALID_MODES:
                raise ValueError(mode)
            entry = Entry(mode, hash_b.decode(), int(size_b))
        except ValueError as exc:  # UnicodeDecodeError included
            raise StoreDamaged(f"tree {where} has a malformed entry ({exc}); run "
                               "'turnback fsck'") from exc
        name = os.fsdecode(name_b)
        check_name(name, where)
        if not _is_name(entry.hash):
            raise damaged_name(entry.hash, f"tree {where} (entry {name!r})")
        tree[name] = entry
    return tree


def _line(name: str, e: Entry) -> str:
    return f"{e[0]} {e[1]} {e[2]} {name}"


def _join(lines: list[str]) -> bytes:
    """The encoding of a tree from its sorted lines (UnicodeEncodeError: a surrogate name)."""
    return ("\0".join(lines) + "\0").encode("utf-8") if lines else b""


CACHE_MAX = 20000  # trees (and their encoded lines) kept in memory ...
# ... and entries in them and their lines: a cache bounded by trees alone held every entry
# of a first checkpoint of 500,000 files in 21,000 folders (about 200 MB); past this, the
# least recently used trees go. ~320 bytes an entry counted here (634 bytes a tree entry
# read from a pack with its line, tracemalloc): at most ~48 MB. It holds SPEC's 50,000-file
# workspace's trees (102,000) kept by a server (Store.warm_trees).
CACHE_ENTRIES = 150_000


def check_nesting(child: str, ancestors: list[str], path: str) -> None:
    """Refuse to descend into ``child`` at ``path`` when it loops or nests too deep.

    (With every object checked against its hash a loop cannot be stored; this is what
    keeps a reader finite whatever the store holds.)
    """
    if len(ancestors) >= MAX_DEPTH:
        raise StoreDamaged(f"tree {ancestors[0][:12]} nests folders more than {MAX_DEPTH} deep "
                           f"at '{path}'; the store is damaged: run 'turnback fsck'")
    if child in ancestors:
        raise StoreDamaged(f"tree {child[:12]} contains itself (at '{path}'); the store is "
                           "damaged: run 'turnback fsck'")


class TreeReader:
    """Reads trees through an in-memory cache (trees are immutable), least recently used
    trees dropped first past ``CACHE_MAX`` trees or ``CACHE_ENTRIES`` entries.

    The trees this process encoded also keep their sorted names and encoded lines: a
    checkpoint that changes a few names of a folder re-encodes only those lines (a
    folder of 50 entries, hash included: 5.4 µs instead of 14.7 µs; 10 changed files patch
    about 35 folders). Past the bounds, trees a checkpoint replaced by a new version go
    first, then the least recently used: not everything at once, so a long-lived server
    keeps the folders ``warm`` read after its walk decoded through many checkpoints.
    """

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects
        self._cache: OrderedDict[str, Tree] = OrderedDict()  # the least recently used first
        self._lines: dict[str, tuple[list[str], list[str]]] = {}  # hash -> (names, lines)
        self._held = 0  # entries in the cached trees and lines
        self._replaced: OrderedDict[str, None] = OrderedDict()  # cached, superseded, unused since
        # Taken by whatever changes ``_held`` (the server's read pool and its writes share
        # this reader): ``+=`` on an attribute is not atomic across threads, and a count
        # that drifted up would keep the cache emptying itself. Lookups take no lock.
        self._guard = threading.Lock()

    def _remember(self, name: str, tree: Tree) -> None:
        """Cache a tree as the most recently used, within the bounds."""
        with self._guard:
            try:
                self._cache.move_to_end(name)
                self._replaced.pop(name, None)
            except KeyError:
                self._held += len(tree)
                self._cache[name] = tree
            if len(self._cache) > CACHE_MAX or self._held > CACHE_ENTRIES:
                self._shrink()

    def _shrink(self) -> None:
        # Called with ``_guard`` held. Lookups on other threads (the server's read pool)
        # use the cache meanwhile: every step here is one dict operation, and one that
        # finds its item gone stops or skips.
        cache, lines, replaced = self._cache, self._lines, self._replaced
        while cache and (len(cache) > CACHE_MAX or self._held > CACHE_ENTRIES):
            try:
                if replaced:
                    oldest = replaced.popitem(last=False)[0]
                    tree = cache.pop(oldest, {})
                else:
                    oldest, tree = cache.popitem(last=False)
            except KeyError:
                break
            self._held -= len(tree)
            got = lines.pop(oldest, None)
            if got is not None:
                self._held -= len(got[1])

    def clear(self) -> None:
        """Forget every cached tree (the next reads go to the store)."""
        with self._guard:
            self._cache.clear()
            self._lines.clear()
            self._replaced.clear()
            self._held = 0

    @property
    def held(self) -> int:
        """Entries held in the cached trees and their lines."""
        return self._held

    def get(self, name: str, remember: bool = True) -> Tree:
        """A tree; ``remember=False``: read once and not cached (a full scan's)."""
        tree = self._cache.get(name)
        if tree is not None:
            try:
                self._cache.move_to_end(name)  # the most recently used now
            except KeyError:
                return tree  # dropped by another thread meanwhile: still this tree
            if self._replaced:
                self._replaced.pop(name, None)  # in use again (a rewind's target)
            return tree
        tree, lines = decode_lines(self.objects.get(TREE, name), name[:12])
        if not remember:
            return tree
        if lines is not None and name not in self._lines:
            # a folder an incremental checkpoint patches next: its lines as read
            with self._guard:
                if name not in self._lines:
                    self._held += len(lines)
                    self._lines[name] = (list(tree), lines)
        self._remember(name, tree)
        return tree

    def warm(self, root: str, budget: int) -> int:
        """Read the trees below ``root`` into the cache, breadth first, until the cache
        holds ``budget`` entries; returns the trees read.

        A server does this once after a walk (which reuses folder records and decodes no
        tree): an incremental checkpoint then finds the ~60 folders on 10 changed paths
        decoded instead of reading them out of packs. Breadth first, so where the budget
        ends (a big workspace) the folders every path crosses are the ones kept.
        """
        budget = min(budget, CACHE_ENTRIES)
        queue, seen, read = [root], {root}, 0
        for name in queue:  # grows as it goes
            if self._held >= budget:
                break
            if name not in self._cache:
                read += 1
            for entry in self.get(name).values():
                if entry.mode == DIR and entry.hash not in seen:
                    if len(seen) >= CACHE_MAX:
                        break
                    seen.add(entry.hash)
                    queue.append(entry.hash)
        return read

    def put(self, tree: Tree) -> str:
        name = self.objects.put(TREE, encode(tree))
        self._remember(name, tree)
        return name

    def name(
        self, tree: Tree, base: str | None = None, changed: Iterable[str] = (),
        remember: bool = True,
    ) -> tuple[str, bytes]:
        """A tree's hash and encoding, remembered (store it with ``put_encoded``).

        ``base``: the tree this one was made from by changing only the ``changed`` names
        (added, replaced or removed); their lines alone are redone when ``base``'s are known.
        ``remember=False``: not cached. A full scan's trees are never read back by it, and
        an incremental scan after it reads the few it patches: cached, a first checkpoint
        of 500,000 files held the last 100,000 entries (``CACHE_ENTRIES``, about 40 MB).
        """
        got = self._lines.get(base) if base is not None and _FAST else None
        if got is not None:
            names, lines = list(got[0]), list(got[1])
            for n in changed:
                i = bisect_left(names, n)
                here = i < len(names) and names[i] == n
                e = tree.get(n)
                if e is not None:
                    if here:
                        lines[i] = _line(n, e)
                    else:
                        names.insert(i, n)
                        lines.insert(i, _line(n, e))
                elif here:
                    del names[i], lines[i]
            if len(names) != len(tree):  # not what the caller said: do it all
                got = None
        if got is None and _FAST:
            names = sorted(tree)
            lines = [_line(n, tree[n]) for n in names]
        try:
            data = _join(lines) if _FAST else encode(tree)
        except UnicodeEncodeError:
            data = encode(tree)  # a name with undecodable bytes sorts by bytes
            names = []
        name = hash_bytes(TREE, data)
        if not remember:
            return name, data
        if _FAST and (names or not tree):
            with self._guard:
                if name not in self._lines:
                    self._held += len(names)
                self._lines[name] = (names, lines)
        if base is not None and base != name and base in self._cache:
            # the version this one replaces: dropped before any other tree when room is
            # needed (the oldest replaced first), so a long-lived server's cache keeps the
            # folders it has not touched since a walk rather than superseded versions
            self._replaced[base] = None
        self._remember(name, tree)  # after the lines: dropping a tree drops its lines
        return name, data

    def put_encoded(self, name: str, data: bytes) -> None:
        """Store a tree already named by ``name()``."""
        self.objects.put(TREE, data, name=name)

    def put_transient(self, tree: Tree) -> str:
        """Name a tree without storing it (diffs against the working tree)."""
        name = hash_bytes(TREE, encode(tree))
        self._remember(name, tree)
        return name

    def walk(self, root: str, prefix: str = "") -> Iterator[tuple[str, Entry]]:
        """Every non-folder entry below ``root`` as (relative path, entry).

        A tree that contains itself, nests deeper than ``MAX_DEPTH`` or holds more than
        ``MAX_FILES`` files is damage (``StoreDamaged``), never endless recursion.
        """
        return self._walk(root, prefix, [root], [0])

    def _walk(self, root: str, prefix: str, ancestors: list[str], files: list[int]
              ) -> Iterator[tuple[str, Entry]]:
        tree = self.get(root)
        files[0] += len(tree)
        if files[0] > MAX_FILES:
            raise StoreDamaged(f"tree {ancestors[0][:12]} holds more than {MAX_FILES} files "
                               "(a damaged or crafted tree); run 'turnback fsck'")
        for name, entry in sorted(tree.items()):
            path = f"{prefix}{name}"
            if entry.mode == DIR:
                check_nesting(entry.hash, ancestors, path)
                ancestors.append(entry.hash)
                yield from self._walk(entry.hash, path + "/", ancestors, files)
                ancestors.pop()
            else:
                yield path, entry

    def lookup(self, root: str, path: str) -> Entry | None:
        """The entry at ``path`` (``a/b/c``) in tree ``root``, or None."""
        tree = self.get(root)
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            entry = tree.get(part)
            if entry is None:
                return None
            if i == len(parts) - 1:
                return entry
            if entry.mode != DIR:
                return None
            tree = self.get(entry.hash)
        return Entry(DIR, root, 0)

    def flatten(self, root: str) -> dict[str, Entry]:
        return dict(self.walk(root))
