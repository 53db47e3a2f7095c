"""Directory listings (tree objects): the Merkle structure of a checkpoint.

A tree lists one folder's entries, sorted by name bytes: mode, hash, size, name. Modes:
``f`` file (permissions 0644), ``x`` executable file (0755), ``pNNN`` a file with any
other permission bits (octal, e.g. ``p600``; format 2), ``l`` symlink (the blob holds the
link target), ``d`` folder (the hash names another tree). A folder that did not change
keeps its hash, so checkpoints share it. Trees are written binary (format 3: raw hashes,
columns, ``encode``); text trees (``<mode> <hash> <size> <name>\\0`` lines, formats 1-2)
are read as they are and keep their names, so a store may hold both.
"""

from __future__ import annotations

import os
import re
import struct
import sys
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from itertools import repeat
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
_SIZE_MAX = (1 << 64) - 1  # an entry's size: a binary tree's u64
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
_BAD_RAW_NAMES = frozenset((b"", b".", b".."))

# The binary encoding (format 3, docs/FORMAT.md "Objects"): a tag byte no text tree starts
# with (its first byte is a mode letter), the entry count, then the entries' columns:
# raw 32-byte hashes, sizes (u64), modes (u16), names (each ends with NUL); little-endian.
# Columns, not rows: a reader turns each into values with one C call (``bytes.hex``,
# ``array.frombytes``, ``split``); a third fewer bytes than text are hashed and packed
# (SPEC's workspace's 1,001 folders: 2.95 against 4.48 MB).
BINARY_TAG = b"\x01"
_COUNT = struct.Struct("<I")
_SIZE = struct.Struct("<Q")
_CODE = struct.Struct("<H")
_HEAD = len(BINARY_TAG) + _COUNT.size
_ROW = 32 + 8 + 2  # hash, size, mode: an entry's fixed columns
_BIG_ENDIAN = sys.byteorder == "big"
# git's mode numbers: a regular file 0o100000 | its permission bits, a link, a folder
MODE_CODES: dict[str, int] = {
    DIR: 0o040000, LINK: 0o120000,
    **{m: 0o100000 | p for p, m in enumerate(FILE_MODES)}}
CODE_MODES: dict[int, str] = {c: m for m, c in MODE_CODES.items()}


def encode(tree: Tree) -> bytes:
    """A tree's binary encoding (an empty tree: no bytes, as in text)."""
    return _encode_named(tree)[1]


def _encode_named(tree: Tree) -> tuple[list[str] | None, bytes]:
    """The encoding, with the names in its order when patching may bisect them (strict
    UTF-8 names: code point order is their bytes' order), else None."""
    if not tree:
        return [], b""
    names = sorted(tree)
    try:
        if not _FAST:
            raise UnicodeEncodeError("utf-8", "", 0, 0, "not a UTF-8 file system")
        tail = ("\0".join(names) + "\0").encode("utf-8")
        kept: list[str] | None = names
    except UnicodeEncodeError:  # a name with undecodable bytes: sorted by its bytes
        pairs = sorted((os.fsencode(n), n) for n in tree)
        names = [n for _, n in pairs]
        tail = b"".join([raw + b"\0" for raw, _ in pairs])
        kept = None
    entries = [tree[n] for n in names]
    hashes = bytes.fromhex("".join([e[1] for e in entries]))
    if len(hashes) != 32 * len(entries):
        raise ValueError("a tree entry's hash is not 64 hex digits")
    sizes = array("Q", [e[2] for e in entries])
    codes = array("H", [MODE_CODES[e[0]] for e in entries])
    if _BIG_ENDIAN:
        sizes.byteswap()
        codes.byteswap()
    return kept, b"".join((BINARY_TAG, _COUNT.pack(len(entries)), hashes, sizes, codes, tail))


def _patched(names: list[str], data: bytes, tree: Tree, changed: Iterable[str]
             ) -> tuple[list[str], bytes] | None:
    """``tree``'s encoding from its base's (``names``, ``data``: a binary encoding in strict
    UTF-8 names) with only the ``changed`` names redone, written into a copy of ``data``;
    None when that does not give ``tree`` (the caller said less than changed) or a new
    name is not strict UTF-8."""
    copied = False  # ``names`` is the kept list: copied before a name goes in or out
    out = bytearray(data or BINARY_TAG + _COUNT.pack(0))
    for c in changed:
        n = len(names)
        i = bisect_left(names, c)
        here = i < n and names[i] == c
        e = tree.get(c)
        h_at = _HEAD + 32 * i
        s_at = _HEAD + 32 * n + 8 * i
        c_at = _HEAD + 40 * n + 2 * i
        if e is not None:
            raw = bytes.fromhex(e[1])
            if len(raw) != 32:
                return None
            size, code = _SIZE.pack(e[2]), _CODE.pack(MODE_CODES[e[0]])
            if here:
                out[h_at:h_at + 32], out[s_at:s_at + 8], out[c_at:c_at + 2] = raw, size, code
                continue
            try:
                name = c.encode("utf-8") + b"\0"
            except UnicodeEncodeError:
                return None
            # back to front: each insertion leaves the places before it where they were
            n_at = _HEAD + _ROW * n + _name_offset(names, i)
            out[n_at:n_at] = name
            out[c_at:c_at], out[s_at:s_at], out[h_at:h_at] = code, size, raw
            if not copied:
                names, copied = list(names), True
            names.insert(i, c)
        elif here:
            n_at = _HEAD + _ROW * n + _name_offset(names, i)
            del out[n_at:n_at + len(c.encode("utf-8")) + 1]
            del out[c_at:c_at + 2], out[s_at:s_at + 8], out[h_at:h_at + 32]
            if not copied:
                names, copied = list(names), True
            del names[i]
        else:
            continue
        _COUNT.pack_into(out, len(BINARY_TAG), len(names))
    if len(names) != len(tree):
        return None
    return names, bytes(out) if names else b""


def _name_offset(names: list[str], i: int) -> int:
    """Where the ``i``-th name starts in the names column (strict UTF-8 names)."""
    return len(("\0".join(names[:i]) + "\0").encode("utf-8")) if i else 0


def decode(data: bytes, where: str) -> Tree:
    return decode_kept(data, where)[0]


def decode_kept(data: bytes, where: str) -> tuple[Tree, list[str] | None]:
    """A tree, text (formats 1-2) or binary (3), and for a binary one whose names are
    strict UTF-8 its names in order: what ``TreeReader.name`` patches it from."""
    if data[:1] == BINARY_TAG:
        return _decode_binary(data, where)
    return _decode_text(data, where), None


def _damaged(where: str, why: str) -> StoreDamaged:
    return StoreDamaged(f"tree {where} {why}; the store is damaged: run 'turnback fsck'")


def _decode_binary(data: bytes, where: str) -> tuple[Tree, list[str] | None]:
    if len(data) < _HEAD:
        raise _damaged(where, "is truncated")
    (n,) = _COUNT.unpack_from(data, len(BINARY_TAG))
    if n > MAX_ENTRIES:
        raise _too_many(where)
    if n == 0:  # an empty tree is stored as no bytes: this is no writer's
        raise _damaged(where, "says it has no entries")
    h_end = _HEAD + 32 * n
    s_end = h_end + 8 * n
    c_end = s_end + 2 * n
    if len(data) < c_end + 2 * n:  # each name at least one byte and its NUL
        raise _damaged(where, f"is truncated (it says it has {n} entries)")
    if data[-1:] != b"\0":
        raise _damaged(where, "is truncated (its last name does not end)")
    raw_names = data[c_end:-1].split(b"\0")
    if len(raw_names) != n:
        raise _damaged(where, f"has {len(raw_names)} names for {n} entries")
    if b"/" in data[c_end:] or not _BAD_RAW_NAMES.isdisjoint(raw_names):
        bad = next(r for r in raw_names if r in _BAD_RAW_NAMES or b"/" in r)
        raise Unsafe(f"tree {where} has an entry named {os.fsdecode(bad)!r}, which is not a "
                     "plain file name")
    if raw_names != sorted(raw_names):
        raise _damaged(where, "has its names out of order")
    names: list[str] | None
    if _FAST:
        try:
            names = data[c_end:-1].decode("utf-8").split("\0")
            kept = names
        except UnicodeDecodeError:
            names, kept = [os.fsdecode(r) for r in raw_names], None
    else:
        names, kept = [os.fsdecode(r) for r in raw_names], None
    text = data[_HEAD:h_end].hex()
    hashes = [text[i:i + 64] for i in range(0, 64 * n, 64)]
    sizes, codes = array("Q"), array("H")
    sizes.frombytes(data[h_end:s_end])
    codes.frombytes(data[s_end:c_end])
    if _BIG_ENDIAN:
        sizes.byteswap()
        codes.byteswap()
    modes = list(map(CODE_MODES.get, codes))
    if None in modes:
        bad_code = codes[modes.index(None)]
        raise _damaged(where, f"has an entry of mode {bad_code:o}, which is no mode Turnback "
                       "writes")
    # no Python frame per entry (a namedtuple's __new__ and _make have one)
    tree = dict(zip(names, map(tuple.__new__, repeat(Entry), zip(modes, hashes, sizes,
                                                                 strict=True)), strict=True))
    if len(tree) != n:
        raise _damaged(where, "names an entry twice")
    return tree, kept


def _decode_text(data: bytes, where: str) -> Tree:
    """A text tree (formats 1 and 2: ``<mode> <hash> <size> <name>\\0`` lines)."""
    tree: Tree = {}
    if not data:
        return tree
    if not _FAST:
        return _decode_slow(data, where)
    text = data.decode("utf-8", _FS_ERRORS)
    parts = text.split("\0")
    if parts[-1] != "":
        raise StoreDamaged(f"tree {where} is truncated")
    parts.pop()
    if len(parts) > MAX_ENTRIES:
        raise _too_many(where)
    modes = VALID_MODES
    hashes: list[str] = []
    add = hashes.append
    sizes: list[int] = []
    size_of = sizes.append
    new = tuple.__new__  # no Python frame per entry (a namedtuple's __new__ and _make have one)
    try:
        for raw in parts:
            mode, h, size, name = raw.split(" ", 3)
            if mode not in modes or name in _BAD_NAMES or "/" in name or len(h) != 64:
                return _decode_slow(data, where)  # names the fault precisely
            add(h)
            size_of(s := int(size))
            tree[name] = new(Entry, (mode, h, s))
    except ValueError:
        return _decode_slow(data, where)
    # every hash lowercase hex, checked for the whole folder at once (a regex per entry
    # cost 60 ms more per 50,000 files; this costs about 8)
    if "".join(hashes).encode("ascii", "replace").translate(None, _HEX):
        return _decode_slow(data, where)
    if min(sizes) < 0 or max(sizes) > _SIZE_MAX:
        return _decode_slow(data, where)
    return tree


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
            if not 0 <= entry.size <= _SIZE_MAX:  # a binary tree could not hold it
                raise ValueError(f"size {entry.size}")
        except ValueError as exc:  # UnicodeDecodeError included
            raise StoreDamaged(f"tree {where} has a malformed entry ({exc}); run "
                               "'turnback fsck'") from exc
        name = os.fsdecode(name_b)
        check_name(name, where)
        if not _is_name(entry.hash):
            raise damaged_name(entry.hash, f"tree {where} (entry {name!r})")
        tree[name] = entry
    return tree


CACHE_MAX = 20000  # trees (and their kept encodings) kept in memory ...
# ... and entries in them and their kept names: a cache bounded by trees alone held every
# entry of a first checkpoint of 500,000 files in 21,000 folders (about 200 MB); past this,
# the least recently used trees go. ~320 bytes an entry counted here (634 bytes a text tree's
# entry read from a pack with its line, tracemalloc; a binary tree's with its kept names and
# bytes is 17% less, bench/RESULTS.md, bintree16): at most ~48 MB. It holds SPEC's
# 50,000-file workspace's trees (102,000) kept by a server (Store.warm_trees).
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

    The binary trees this process encoded or read also keep their sorted names and
    encoding: a checkpoint that changes a few names of a folder patches only those
    entries' columns (10 changed files patch about 35 folders; bench/RESULTS.md, issue 16,
    branch ``bintree16``). Past the bounds, trees a checkpoint replaced by a new version go
    first, then the least recently used: not everything at once, so a long-lived server
    keeps the folders ``warm`` read after its walk decoded through many checkpoints.
    """

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects
        self._cache: OrderedDict[str, Tree] = OrderedDict()  # the least recently used first
        # hash -> (names in order, binary encoding): what ``name`` patches a folder from
        self._kept: dict[str, tuple[list[str], bytes]] = {}
        self._held = 0  # entries in the cached trees and kept encodings
        self._replaced: OrderedDict[str, None] = OrderedDict()  # cached, superseded, unused since
        # Taken by whatever changes ``_held`` (the server's read pool and its writes share
        # this reader): ``+=`` on an attribute is not atomic across threads, and a count
        # that drifted up would keep the cache emptying itself. Lookups take no lock.
        self._guard = threading.Lock()

    def _remember(self, name: str, tree: Tree) -> None:
        """Cache a tree as the most recently used, within the bounds."""
        with self._guard:
            self._remember_held(name, tree)

    def _remember_held(self, name: str, tree: Tree) -> None:
        """``_remember`` with ``_guard`` held. A tree new to the cache (every folder a
        checkpoint names) is looked for, not moved and caught: an exception a folder cost
        ~1 us."""
        cache = self._cache
        if name in cache:
            cache.move_to_end(name)
            self._replaced.pop(name, None)
        else:
            self._held += len(tree)
            cache[name] = tree
        if len(cache) > CACHE_MAX or self._held > CACHE_ENTRIES:
            self._shrink()

    def _shrink(self) -> None:
        # Called with ``_guard`` held. Lookups on other threads (the server's read pool)
        # use the cache meanwhile: every step here is one dict operation, and one that
        # finds its item gone stops or skips.
        cache, kept, replaced = self._cache, self._kept, self._replaced
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
            got = kept.pop(oldest, None)
            if got is not None:
                self._held -= len(got[0])

    def clear(self) -> None:
        """Forget every cached tree (the next reads go to the store)."""
        with self._guard:
            self._cache.clear()
            self._kept.clear()
            self._replaced.clear()
            self._held = 0

    @property
    def held(self) -> int:
        """Entries held in the cached trees and their kept encodings."""
        return self._held

    def get(self, name: str, remember: bool = True, revive: bool = True) -> Tree:
        """A tree; ``remember=False``: read once and not cached (a full scan's).

        ``revive=False``: a replaced version stays first to go (a look-up of one path)."""
        tree = self._cache.get(name)
        if tree is not None:
            try:
                self._cache.move_to_end(name)  # the most recently used now
            except KeyError:
                return tree  # dropped by another thread meanwhile: still this tree
            if self._replaced and revive:
                self._replaced.pop(name, None)  # in use again (a rewind's target)
            return tree
        data = self.objects.get(TREE, name)
        tree, names = decode_kept(data, name[:12])
        if not remember:
            return tree
        if names is not None and name not in self._kept:
            # a folder an incremental checkpoint patches next: its encoding as read
            with self._guard:
                if name not in self._kept:
                    self._held += len(names)
                    self._kept[name] = (names, data)
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
        (added, replaced or removed); their entries alone are redone when ``base``'s encoding
        is kept.
        ``remember=False``: not cached. A full scan's trees are never read back by it, and
        an incremental scan after it reads the few it patches: cached, a first checkpoint
        of 500,000 files held the last 100,000 entries (``CACHE_ENTRIES``, about 40 MB).
        """
        got = self._kept.get(base) if base is not None else None
        done = _patched(got[0], got[1], tree, changed) if got is not None else None
        names, data = done if done is not None else _encode_named(tree)
        name = hash_bytes(TREE, data)
        if not remember:
            return name, data
        with self._guard:  # taken once for all three
            if names is not None:
                if name not in self._kept:
                    self._held += len(names)
                self._kept[name] = (names, data)
            if base is not None and base != name and base in self._cache:
                # the version this one replaces: dropped before any other tree when room is
                # needed (the oldest replaced first), so a long-lived server's cache keeps
                # the folders it has not touched since a walk rather than superseded versions
                self._replaced[base] = None
            self._remember_held(name, tree)  # after the encoding: dropping a tree drops it
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
        """The entry at ``path`` (``a/b/c``) in tree ``root``, or None.

        The folders read stay replaced if they were: a server's read-ahead looks up the
        previous versions of the changed paths in the last checkpoint, which after a rewind
        is its safety checkpoint, superseded. Revived by that, every at-once rewind's ~35
        safety folders stayed cached at the others' expense: once the cache had filled, the
        next rewind read its target's folders back out of packs (~40 trees, +2.5 ms of CPU;
        bench/RESULTS.md, issue 16, branch ``atonce16d``)."""
        tree = self.get(root, revive=False)
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            entry = tree.get(part)
            if entry is None:
                return None
            if i == len(parts) - 1:
                return entry
            if entry.mode != DIR:
                return None
            tree = self.get(entry.hash, revive=False)
        return Entry(DIR, root, 0)

    def flatten(self, root: str) -> dict[str, Entry]:
        return dict(self.walk(root))
