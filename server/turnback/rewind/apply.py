"""Applying a plan: removes first (deepest paths first), then each file written to a
temporary name beside it and renamed into place, all through folders opened without
following a link (``fs/folders.py``: descriptors on POSIX, checked paths on
Windows). Each path is looked at again right before it is replaced, so nothing
that the plan did not expect there is ever overwritten. Every step is idempotent, which
is what lets a journal finish an interrupted rewind by applying the plan again.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
import sys
import unicodedata
import zlib
from collections.abc import Callable, Sequence

import blake3

from ..errors import Conflict, TurnbackError, Unsafe
from ..fs import hardlinks, rewindnames
from ..fs.exchange import exchange, rename_no_replace
from ..fs.folders import (
    FdFolder,
    Folder,
    NotAFolder,
    chmod_fd,
    identity,
    is_link,
    open_dir,
    open_root,
)
from ..fs.leftovers import remove_checked
from ..fs.osflags import O_BINARY, O_CLOEXEC, O_NONBLOCK
from ..fs.paths import refuse_protected_path
from ..fs.walk import walk
from ..objects.objectstore import BLOB, CHUNK, ObjectStore, hash_bytes
from ..objects.trees import LINK, STAT_MODES, Entry, permissions
from .lostnames import unlink_lost
from .plan import Plan
from .putback import SAVED_INFIX, clear_special, is_special, put_back, save_aside
from .writefolders import WriteFolders

UNREADABLE = Entry("?", "unreadable", 0)  # equal to no entry a plan holds


def disk_entry(dfd: Folder, name: str) -> Entry | None:
    """What stands at ``name`` in folder ``dfd`` now, as a tree entry (hashing the file).

    None: nothing a rewind must keep — no file, an (emptied) folder the put clears or
    refuses, or a FIFO or device, which hold no bytes and are replaced as before.
    ``UNREADABLE``: a file that cannot be read, so nothing can vouch for it.
    """
    try:
        st = dfd.lstat(name)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return UNREADABLE
    if is_link(st):
        try:
            target = dfd.readlink(name)
        except OSError:
            return UNREADABLE
        raw = os.fsencode(target)
        return Entry(LINK, hash_bytes(BLOB, raw), len(raw))
    if not stat.S_ISREG(st.st_mode):
        return None
    return _file_entry(dfd, name)


def _file_entry(dfd: Folder, name: str) -> Entry | None:
    """``disk_entry`` of ``name``, which an ``lstat`` just found a regular file. What was
    opened is looked at before it is read: a FIFO swapped in since is no file (read, it
    gave another program's data as the file's, tests/rewind/test_file_swapped_for_a_fifo.py)."""
    try:
        fd = dfd.open(name, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY)
    except FileNotFoundError:
        return None
    except OSError:
        return UNREADABLE
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        h = blake3.blake3(BLOB + b"\0")
        size = 0
        while chunk := os.read(fd, CHUNK):
            h.update(chunk)
            size += len(chunk)
    except OSError:
        return UNREADABLE
    finally:
        os.close(fd)
    return Entry(STAT_MODES[st.st_mode & 0o777], h.hexdigest(), size)


def _open_folder(root: Folder, path: str) -> Folder | None:
    """The folder holding ``path``, open; None when it is not there (no file stands at
    ``path`` then). A link on the way raises ``Unsafe``."""
    try:
        return open_dir(root, path.split("/")[:-1], create=False)
    except (FileNotFoundError, NotADirectoryError, NotAFolder):
        return None


def _lstat_or_none(dfd: Folder, name: str) -> os.stat_result | None:
    try:
        return dfd.lstat(name)
    except OSError:
        return None


def kept_name(op: str, path: str) -> str:
    """The 8 hex digits that name the second name of ``path``'s replaced file in rewind
    ``op``: found again by ``Applier.restore_late`` after a crash."""
    # fsencode: a name that is no UTF-8 is held with surrogate escapes, which encode() refuses
    return blake3.blake3(op.encode() + b"\0" + os.fsencode(path)).hexdigest()[:8]


def _one_file(dfd: Folder, name: str, other: str) -> bool:
    """Whether ``name`` and ``other`` are two names of one file (a hard link)."""
    a, b = _lstat_or_none(dfd, name), _lstat_or_none(dfd, other)
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _same(now: Entry | None, want: Entry | None) -> bool:
    if now is None or want is None:
        return now is want
    return now.mode == want.mode and now.hash == want.hash


class Changed(Conflict):
    """A path changed between the plan and its write: the rewind keeps it and stops."""

    def __init__(self, paths: list[str], saved: str | None = None,
                 newer_saved: bool = False, also: list[str] | None = None) -> None:
        shown = ", ".join(f"'{p}'" for p in paths[:5]) + (" …" if len(paths) > 5 else "")
        if saved is not None and newer_saved:
            # a third thing put at the path between the two swaps (``_stranger_out``): the
            # path holds the first save again, the later one is the one saved aside
            text = (
                f"{shown} changed twice while the rewind ran (saved by an editor or an agent): "
                f"what was saved there first is in place, and what was put there after it is "
                f"in '{saved}'; the rewind was rolled back: nothing was lost, and there is "
                "nothing of it to undo (undo would undo the operation before it). Keep what "
                "you need of that file, then rewind again once the workspace is quiet")
        elif saved is None:
            text = (
                f"{shown} changed while the rewind ran (saved by an editor or an agent); the "
                "new content is kept and the rewind was rolled back: nothing was lost, and "
                "there is nothing of it to undo (undo would undo the operation before it). "
                "Rewind again once the workspace is quiet")
        else:
            text = (
                f"{shown} changed twice while the rewind ran (saved by an editor or an agent): "
                f"the newest content is kept in place, and what it held before that is in "
                f"'{saved}'; the rewind was rolled back: nothing was lost, and there is nothing of "
                "it to undo (undo would undo the operation before it). Keep what you need of "
                "that file, then rewind again once the workspace is quiet")
        if also:  # a save that a later one kept from its path (``put_back``, trust29)
            text += ". A save made in between is in " + ", ".join(f"'{a}'" for a in also)
        super().__init__(text)
        self.paths = paths
        self.saved = saved


def _remove_empty_folders(dfd: Folder, name: str) -> bool:
    """Remove folder ``name`` if it holds nothing but folders, recursively; never a file.

    Walks without following links (a link is not empty).
    """
    with dfd.child(name) as fd:
        for child in fd.listdir():
            if child.lower() == ".git":
                return False  # a nested repository: nothing in it is removed, not even empty
                # folders (a fresh repository's objects/ holds only empty ones)
            st = fd.lstat(child)
            if not stat.S_ISDIR(st.st_mode) or is_link(st):
                return False
            if not _remove_empty_folders(fd, child):
                return False
    dfd.rmdir(name)
    return True


TMP_PREFIX = rewindnames.PREFIX  # a file being written into place, or one replaced (kept
# until ``Applier.release``); a crash may leave either. Only a name of this rewind's (its
# tag, ``_tags``) whose writer is gone is cleaned up, never a user's look-alike (trust24)


def write_tag(op: str, folder: str, kind: str, pid: int, nonce: str) -> str:
    """The tag of a file being written in ``folder`` by rewind ``op``: 4 random hex
    (``nonce``: two writes in one folder) and 4 of a CRC of them with the op, the folder,
    what is written (``f`` a file, ``l`` a link) and the pid, found again by
    ``remove_temps`` after a crash. A check, not a secret: blake3 made each file's name
    ~3 us slower (bench/RESULTS.md, trust24)."""
    raw = f"{op}\0w\0{kind}\0{pid}\0{nonce}\0".encode() + os.fsencode(folder)
    return f"{nonce}{zlib.crc32(raw) & 0xFFFF:04x}"


def _kind(st: os.stat_result) -> str | None:
    """What ``_put`` writes that ``st`` is: ``f``, ``l``, or None (a folder, a FIFO...)."""
    if stat.S_ISREG(st.st_mode):
        return "f"
    return "l" if is_link(st) else None


def _owned(st: os.stat_result) -> bool:
    """Whether this user owns the file (Windows reports no owner: taken as so)."""
    return sys.platform == "win32" or st.st_uid == os.geteuid()


def _tags(op: str, plan: Plan) -> dict[str, set[str]]:
    """The tags of second names ``op`` may make, by folder: one a path of ``plan`` (its
    writes, and its removes, which a roll-back writes back)."""
    by_folder: dict[str, set[str]] = {}
    for path in plan.paths():
        by_folder.setdefault(path.rpartition("/")[0], set()).add(kept_name(op, path))
    return by_folder


def _of_op(op: str, folder: str, kept_tags: set[str], name: str,
           st: os.stat_result) -> int | None:
    """The pid in ``name`` if it is a temporary name rewind ``op`` made in ``folder`` (its
    ``lstat`` in ``st``): a second name (a regular file, its tag one of ``kept_tags``) or a
    file being written (a file or a link, its tag ``write_tag``'s), or an empty probe file
    (``rewindnames.probe``: any op's clean-up in its folder takes it). Else None: a look-alike
    (a wrong mark or tag, a folder, a link by a second name's name) is the user's."""
    got = rewindnames.parse(name)
    kind = _kind(st)
    if got is None:
        # a second name an older Turnback gave (its killed rewind's journal, recovered by
        # this one): the tag alone, bound to op and path, says it is this op's (redteam26);
        # its files being written had random tags, which nothing tells from a user's
        old = rewindnames.parse_old(name)
        return old[0] if old is not None and kind == "f" and old[1] in kept_tags else None
    pid, tag = got
    if kind == "f" and tag in kept_tags:
        return pid
    if kind == "f" and st.st_size == 0 and rewindnames.is_probe(pid, tag):
        return pid  # fs/hardlinks' empty probe file, of no op: left by a kill (trust30)
    if kind is not None and tag == write_tag(op, folder, kind, pid, tag[:4]):
        return pid
    return None


def _remove_temp(dfd: Folder, op: str, folder: str, kept_tags: set[str], name: str,
                 st: os.stat_result) -> None:
    """Unlink ``name``, looked at in ``st`` as op's, only if it still is that file: moved
    first to a name of op's of this process (a file being written, which a later recovery
    of op removes if a crash leaves it) and looked at there (``remove_checked``). By name,
    a file renamed to it between the look and the unlink was deleted (trust25)."""
    kind = _kind(st) or "f"
    mine = os.getpid()
    private = rewindnames.make(mine, write_tag(op, folder, kind, mine, os.urandom(2).hex()))
    try:
        remove_checked(dfd, name, private, st, lambda now: _owned(now) and _of_op(
            op, folder, kept_tags, name, now) is not None)
    except OSError:
        pass  # gone meanwhile: nothing to do


# the most folders ``Applier`` holds a descriptor of until ``release`` (one a folder a
# second name was made in): well under a process's usual 1,024 descriptors; a rewind
# replacing files in more folders looks the rest up by path, as before
HELD_FOLDERS = 64

_ASIDES = itertools.count()  # the names ``Applier._aside`` gives, in this process

# the most ``Applier.preload`` holds: a rewind of many files reads the rest as it writes
PRELOAD_BYTES = 16 << 20


class Applier:
    def __init__(self, workspace: str, objects: ObjectStore, fsync: bool,
                 op: str | None = None) -> None:
        self.workspace = workspace
        self.objects = objects
        self.fsync = fsync
        # the journal's op id: the second names of replaced files derive from it and the
        # path (``kept_name``), so that the next open finds them after a crash
        self.op = op
        self.done: list[str] = []
        self._loaded: dict[str, bytes] = {}  # blobs ``preload`` read, checked, by name
        # files a write replaced, still held by a temporary name (``_put``): (folder, name,
        # the identity ``lstat`` gave that name right after its link)
        self.replaced: list[tuple[str, str, tuple[int, int]]] = []
        # a descriptor of each folder a second name was made in, by its path then, up to
        # ``HELD_FOLDERS``: ``release`` unlinks there even if the folder was renamed since
        self._made_in: dict[str, FdFolder] = {}

    def preload(self, plan: Plan) -> None:
        """Read the blobs ``plan`` writes (each checked against its name), for ``apply``.

        Called while the journal's sync is waited for (``OpLog.begin``): reading a rewind's
        targets out of packs (a partial decompression of a cold block each, ~0.2 ms a file)
        was the largest part of applying a 10-file plan, and the disk wait leaves this
        thread idle. Up to ``PRELOAD_BYTES``; what it cannot read (missing, damaged) is
        left to ``apply``, whose own read says what is wrong.
        """
        budget = PRELOAD_BYTES
        for entry in sorted({**plan.write, **plan.create}.values(), key=self._block_order):
            if entry.mode == LINK or entry.hash in self._loaded or entry.size > budget:
                continue
            try:
                data = self.objects.get(BLOB, entry.hash)
            except (TurnbackError, OSError):
                continue
            budget -= len(data)
            if budget < 0:
                return
            self._loaded[entry.hash] = data

    def _block_order(self, entry: Entry) -> tuple[str, int, int]:
        """Pack blocks together, the object ending last first in each: a block's first read
        decodes it up to that object's end (``packs.SUB_BLOCK``) and its others are found
        decoded; in path order, a block of an undo's 10 targets was decoded twice."""
        loc = self.objects.packs.locate(entry.hash)
        return ("", 0, 0) if loc is None else (loc.pack, loc.block_off, -(loc.off + loc.length))

    def apply(self, plan: Plan, *, strict: bool = True) -> list[str]:
        """Make each path of ``plan`` its target, if it still holds what it held before.

        Right before each path is replaced or removed, what stands there is looked at
        again: already the target, it is left; still ``plan.before``, it is replaced; else
        it changed since the plan was made (an editor's save, an agent's write, or a
        journal that does not describe this workspace) and is never overwritten. Strict
        (a rewind being made): that stops the rewind with ``Changed``. Otherwise
        (recovery, roll-back): it is kept, and returned among the paths left as they are.
        A file replaced is looked at again after the rename, in the file replaced
        (``_put``), a rewind's only look at it. ``self.done`` lists the paths changed so far.
        """
        for path in plan.paths():
            # the last gate, whoever made the plan: nothing is touched if one path is a
            # .git or store folder in some spelling (the store's own check names more)
            refuse_protected_path(path)
        kept: list[str] = []
        self.done = []
        with open_root(self.workspace) as root:
            for path in plan.remove:
                if self._check(root, path, None, plan.before.get(path), strict, kept):
                    self._remove(root, path)
                    self.done.append(path)
            # each folder looked in is the one written to: opened once for every path in
            # it (and below it), not again by _put (``writefolders``)
            with WriteFolders(root) as folders:
                self._write_targets(root, folders, plan, strict, kept)
        self._loaded.clear()
        return kept

    def _write_targets(self, root: Folder, folders: WriteFolders, plan: Plan, strict: bool,
                       kept: list[str]) -> None:
        """``apply``'s writes and creates, in path order (see ``apply``)."""
        for path, entry in sorted({**plan.write, **plan.create}.items()):
            folder = folders.get(path.split("/")[:-1])
            name = path.split("/")[-1]
            was = plan.before.get(path)
            # this look is the write's own: ``_put`` makes none of its own before
            # it links the file held (3 -> 1 ``lstat`` a replaced file)
            seen = None if folder is None else _lstat_or_none(folder, name)
            held = seen is not None and stat.S_ISREG(seen.st_mode)
            if not (strict and held):
                # looked at first: a recovery or a roll-back leaves a path already
                # so, or changed, without a write
                now = None if folder is None else disk_entry(folder, name)
                if not self._decide(path, now, entry, was, strict, kept):
                    continue
            try:
                # a file replaced is looked at once replaced, by its second name
                # (``_put``): a write landing before the rename is seen there
                self._put(root, path, entry, folder, (was,) if held else None,
                          seen if held else None)
            except Changed:
                if strict:
                    raise
                kept.append(path)
                continue
            self.done.append(path)

    def _check(self, root: Folder, path: str, want: Entry | None, was: Entry | None,
               strict: bool, kept: list[str]) -> bool:
        """Whether ``path`` is to be written now (see ``apply``)."""
        folder = _open_folder(root, path)
        if folder is None:
            now = None
        else:
            with folder:
                now = disk_entry(folder, path.split("/")[-1])
        return self._decide(path, now, want, was, strict, kept)

    @staticmethod
    def _decide(path: str, now: Entry | None, want: Entry | None, was: Entry | None,
                strict: bool, kept: list[str]) -> bool:
        """Whether ``path``, holding ``now``, is to be written (see ``apply``)."""
        if _same(now, want):
            return False  # already so (a journal applied again)
        if _same(now, was):
            return True
        if strict:
            raise Changed([path])
        kept.append(path)
        return False

    def release(self) -> None:
        """Unlink the replaced files ``_put`` kept, freeing their blocks now (a server
        calls it after it has answered). Each is unlinked in the folder it was made in,
        through the descriptor held since (``_made_in``), wherever that folder is now: a
        folder renamed between a rewind's answer and this (an editor's refactoring, a
        ``git mv``) kept them for good when they were looked for by path. Only a name
        still the very file linked is unlinked; anything else standing there is left.
        Whatever is not unlinked here (a crash, a folder gone) is a temporary name
        ``remove_temps`` removes, as the journal's recovery does."""
        replaced, self.replaced = self.replaced, []
        made_in, self._made_in = self._made_in, {}
        try:
            self._unlink_kept(replaced, made_in)
        finally:
            for held in made_in.values():
                held.close()

    def release_failed(self) -> None:
        """``release`` on the way out of a failure, any failure (a ``MemoryError``, a
        ``KeyboardInterrupt`` in ``apply`` skipped it: the second names stayed in the
        user's folders and up to ``HELD_FOLDERS`` descriptors open). An error of its own
        is dropped, so the one being raised is what the caller sees; its descriptors are
        closed whatever happens (``release``'s ``finally``). Only names ``_put`` looked at
        are unlinked: one whose look was cut short is left to the journal's recovery
        (``restore_late``, then ``remove_temps``)."""
        try:
            self.release()
        except Exception:  # the failure being raised is the one to tell
            pass

    def _unlink_kept(self, replaced: list[tuple[str, str, tuple[int, int]]],
                     made_in: dict[str, FdFolder]) -> None:
        pid = os.getpid()  # once a release: its names moved aside carry it
        by_folder: dict[str, list[tuple[str, tuple[int, int]]]] = {}
        for folder, name, ident in replaced:
            by_folder.setdefault(folder, []).append((name, ident))
        left: dict[str, list[tuple[str, tuple[int, int]]]] = {}
        for folder, names in sorted(by_folder.items()):
            held = made_in.get(folder)
            rest = names if held is None else [
                n for n in names if not _unlink_own(held, *n, self._aside(folder, pid))]
            if rest:  # past the bound, or (renamed during the rewind) made in another
                left[folder] = rest
        if not left:
            return
        try:
            root = open_root(self.workspace)
        except OSError:
            return  # the workspace gone: a roll-back calling this first goes on to say so
        lost: dict[str, tuple[int, int]] = {}  # not where they were made: moved (trust25)
        with root:
            for folder, names in sorted(left.items()):
                try:
                    dfd = open_dir(root, folder.split("/") if folder else [], create=False)
                except (OSError, Unsafe):
                    lost.update(names)  # gone, or swapped for a link: looked for below
                    continue
                with dfd:
                    for name, ident in names:
                        if not _unlink_own(dfd, name, ident, self._aside(folder, pid)) and (
                                _lstat_or_none(dfd, name) is None):
                            lost[name] = ident
        if lost:
            unlink_lost(self.workspace, lost)

    def _aside(self, folder: str, pid: int | None = None) -> str:
        """A name of this rewind's own in ``folder`` to move a second name to before its
        unlink: a file being written of this op and process, which the op's recovery
        removes if a crash leaves it (``remove_temps``). Its 4 hex count up within the
        process (``remove_checked`` moves nothing over a name taken): a random draw and a
        ``getpid`` a name were 2 of the 5 system calls this added a released file."""
        pid = os.getpid() if pid is None else pid
        nonce = f"{next(_ASIDES) & 0xFFFF:04x}"
        tag = (nonce + os.urandom(2).hex() if self.op is None
               else write_tag(self.op, folder, "f", pid, nonce))
        return rewindnames.make(pid, tag)

    def _hold(self, dfd: FdFolder, folder: str) -> None:
        """Keep a descriptor of ``dfd``, where a second name was just made, for ``release``
        (one a folder, up to ``HELD_FOLDERS``; past it, looked for by path as before)."""
        if folder in self._made_in or len(self._made_in) >= HELD_FOLDERS:
            return
        try:
            fd = os.dup(dfd.fd)  # not inherited by a child process (Python's dup)
        except OSError:
            return  # out of descriptors: by path, as before
        self._made_in[folder] = FdFolder(fd, dfd.path)

    def remove_temps(self, plan: Plan) -> None:
        """Delete the temporary files a killed rewind left beside the files it was writing
        (or a roll-back of it, which writes back what it removed): only names of this op
        (``_of_op``: its tag and mark), of a writer gone (or this process), owned by this
        user. A user's look-alike, and another live rewind's names, are left (trust24)."""
        if self.op is None:
            return  # nothing tells this rewind's names from anyone's
        op = self.op
        with open_root(self.workspace) as root:
            for folder, kept_tags in sorted(_tags(op, plan).items()):
                try:
                    dfd = open_dir(root, folder.split("/") if folder else [], create=False)
                except (OSError, Unsafe):  # gone, unreadable, a symlink: nothing to clean
                    continue
                with dfd:
                    try:
                        names = dfd.listdir()
                    except OSError:
                        continue
                    for name in names:
                        if not name.startswith(TMP_PREFIX):
                            continue
                        st = _lstat_or_none(dfd, name)
                        if st is None or not _owned(st):
                            continue
                        pid = _of_op(op, folder, kept_tags, name, st)
                        if pid is None or not rewindnames.writer_gone(pid, st.st_ctime):
                            continue
                        _remove_temp(dfd, op, folder, kept_tags, name, st)

    def _remove(self, root: Folder, path: str) -> None:
        parts = path.split("/")
        try:
            dfd = open_dir(root, parts[:-1], create=False)
        except (FileNotFoundError, NotADirectoryError, Unsafe):
            # already gone: a re-applied journal may find a file where the folder was
            # (a file <-> folder swap), and nothing is removed through a symlink
            return
        with dfd:
            try:
                dfd.unlink(parts[-1])
            except FileNotFoundError:
                pass
            except (IsADirectoryError, PermissionError) as exc:
                # a folder now stands there: its files are removed one by one (Windows
                # says so with EACCES); a file that cannot be removed is an error
                st = _lstat_or_none(dfd, parts[-1])
                folder = st is not None and stat.S_ISDIR(st.st_mode) and not is_link(st)
                if not folder and not isinstance(exc, IsADirectoryError):
                    raise
        # prune folders the removal emptied, up to the workspace
        for depth in range(len(parts) - 1, 0, -1):
            try:
                pfd = open_dir(root, parts[: depth - 1], create=False)
            except (FileNotFoundError, NotADirectoryError, Unsafe):
                return
            with pfd:
                try:
                    pfd.rmdir(parts[depth - 1])
                except OSError:
                    return  # not empty (other or ignored files): keep it

    def _clear_dir(self, dfd: Folder, name: str, path: str) -> None:
        """A target file replaces a folder: the folder must hold no file by now.

        Empty folders inside it go too: checkpoints do not record empty folders,
        so they are no reason to refuse.
        """
        try:
            if _remove_empty_folders(dfd, name):
                return
            dfd.rmdir(name)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise Conflict(
                    f"cannot restore file '{path}': a folder of that name holds files Turnback "
                    "does not track (ignored files); move them away and rewind again"
                ) from None
            raise

    def _put(self, root: Folder, path: str, entry: Entry, folder: Folder | None = None,
             expect: tuple[Entry | None] | None = None,
             seen: os.stat_result | None = None) -> None:
        """Write ``entry`` at ``path`` through ``folder`` (its folder, open: the caller
        closes it), or through its folder opened (made where missing) here.

        ``expect``: what the file replaced must hold (``plan.before``'s entry), looked at
        after the rename in the file kept by its second name, or right before the rename
        where it has none. Anything else (a write since the safety scan, through a
        descriptor held open or by name, or a save renamed over it) is put back in place
        and the rewind stops (``Changed``); a look before the rename would miss a write
        landing after it, which the rename's freed file then lost.

        ``seen``: the caller's ``lstat`` of the path, a regular file, made just before: no
        folder to clear there, and the file to keep by a second name. Anything swapped in
        since is caught as without it: a folder refuses the link, a link or FIFO linked
        instead is unlinked again and looked at before the rename, another file linked
        instead is what the look after the rename finds (``Changed``).
        """
        parts = path.split("/")
        dfd = folder if folder is not None else self._parent(root, parts, path)
        name = parts[-1]
        pid, nonce = os.getpid(), os.urandom(2).hex()
        tag = (nonce + os.urandom(2).hex() if self.op is None else
               write_tag(self.op, "/".join(parts[:-1]), "l" if entry.mode == LINK else "f",
                         pid, nonce))
        tmp = rewindnames.make(pid, tag)
        placed = False  # renamed into place: the name ``tmp`` is no longer ours to unlink
        # nothing stands at the path at this look (or only an empty folder, removed here):
        # a create, whose rename replaces nothing (``_create``)
        absent = False
        try:
            if seen is None:
                try:
                    st = dfd.lstat(name)
                    if stat.S_ISDIR(st.st_mode) and not is_link(st):
                        self._clear_dir(dfd, name, path)
                        absent = True
                    elif is_special(st):
                        # a FIFO: taken away first, so the create replaces nothing
                        if not clear_special(dfd, name):
                            raise Changed([path])
                        absent = True
                except FileNotFoundError:
                    absent = True
            if entry.mode == LINK:
                target = self.objects.get(BLOB, entry.hash)
                if not target or b"\0" in target:
                    # only a crafted tree (a shipped store, a pulled history) holds one:
                    # os.symlink's ValueError would escape the roll-back and leave a
                    # journal that fails again at every open
                    raise Unsafe(f"cannot restore symlink '{path}': its target in the "
                                 "checkpoint is empty or holds a NUL byte (a crafted tree)")
                dfd.symlink(target, tmp)
            else:
                # private until its bits are set: a 0600 file's bytes are never readable by
                # others through the temporary file
                fd = dfd.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC | O_BINARY,
                              0o600)
                try:
                    loaded = self._loaded.get(entry.hash)
                    if loaded is None:
                        self.objects.copy_blob_to(entry.hash, fd)
                    else:
                        _write_all(fd, loaded)
                    chmod_fd(fd, os.path.join(dfd.path, tmp), permissions(entry.mode))
                    if self.fsync:
                        os.fsync(fd)
                finally:
                    os.close(fd)
            # a create keeps nothing: a file come to the path since the look is a stranger,
            # which the no-replace rename refuses (its second name made it the file replaced)
            kept = None if absent else self._keep_replaced(dfd, name, path, seen)
            # the file linked, by identity: ``release`` unlinks that name only if it still is;
            # this ``lstat`` is also the look after the rename's (``_check_replaced``)
            kept_st = None if kept is None else _lstat_or_none(dfd, kept)
            if kept is not None and kept_st is not None and not stat.S_ISREG(kept_st.st_mode):
                # linked on ``seen``'s word: a link or FIFO swapped in since got this name,
                # which a crash left for good (``_of_op`` leaves such a name: a user's).
                # Taken back: looked at before the rename, as where none is made (redteam30)
                _unlink_made(dfd, kept, kept_st)
                kept = kept_st = None
            ident = None if kept_st is None else identity(kept_st)
            if expect is not None and kept is None:
                # nothing to look at after the rename: looked at now, as the plan's check
                self._decide(path, disk_entry(dfd, name), entry, expect[0], True, [])
            swapped = False
            try:
                # swapped, not renamed, where a file was kept: what stood at the path comes
                # out at ``tmp`` to be looked at; a rename replaced unseen a save renamed over
                # the path since the link (the save lost, redteam30)
                swapped = (kept is not None and isinstance(dfd, FdFolder)
                           and _swap(dfd, tmp, name))
                if not swapped and not (absent and _create(dfd, tmp, name, path)):
                    dfd.rename(tmp, name)
            except BaseException:
                if kept is not None and ident is not None:
                    # only the very file linked
                    _unlink_own(dfd, kept, ident, self._aside("/".join(parts[:-1])))
                raise
            placed = True
            if (swapped and isinstance(dfd, FdFolder) and kept is not None
                    and kept_st is not None and not _took_out_own(dfd, tmp, kept_st)):
                self._stranger_out(dfd, tmp, name, kept, path, entry, expect, kept_st)
            if kept is not None:
                if expect is not None:
                    self._check_replaced(dfd, name, kept, path, entry, expect[0], kept_st)
                if ident is not None and isinstance(dfd, FdFolder):
                    self.replaced.append(("/".join(parts[:-1]), kept, ident))
                    self._hold(dfd, "/".join(parts[:-1]))
        except BaseException:
            if not placed:
                # after the rename a file standing at ``tmp`` is someone else's: unlinked
                # by name, it was lost (a MemoryError in the look at the replaced file)
                _unlink_quietly(dfd, tmp)
            raise
        finally:
            if folder is None:
                dfd.close()

    def _stranger_out(self, dfd: FdFolder, tmp: str, name: str, kept: str, path: str,
                      entry: Entry, expect: tuple[Entry | None] | None,
                      kept_st: os.stat_result) -> None:
        """The swap took out at ``tmp`` another thing than the file kept as ``kept``: one
        put at the path after the link (an editor's save renamed over it, a folder, a
        link). It is newer than the rewind's write, so it goes back in place by a second
        swap, the rewind's write coming out at ``tmp`` again and unlinked; the file kept
        is looked at as after any rename (a write that reached it before the save is
        saved aside); the rewind stops with ``Changed``. Where it cannot go back, the
        error names where it is."""
        folder = "/".join(path.split("/")[:-1])
        aside = None  # where the stranger went, where it could not go back to the path
        try:
            back = _swap(dfd, tmp, name)  # False: the path removed meanwhile, or no swap
            if not back:
                # a newer thing at the path (a swap refused between a file and a folder):
                # it stays, the stranger is saved aside, and the error says where
                aside = put_back(dfd, tmp, name, None)
                if aside is not None and _same(disk_entry(dfd, name), entry):
                    self.done.append(path)  # the rewind's write there: the roll-back's
        except OSError as exc:
            # the stranger is still at ``tmp``, a name of this op's writes, which the
            # roll-back's clean-up removes (a failed second swap: the save deleted,
            # redteam34): it is given a name no clean-up removes, and the path, holding
            # the rewind's write, is the roll-back's to put back
            try:
                where = save_aside(dfd, tmp, name)
            except OSError:
                where = tmp
            self.done.append(path)
            self.replaced.append((folder, kept, identity(kept_st)))
            self._hold(dfd, folder)
            raise Unsafe(
                f"'{path}' changed while the rewind ran and could not be put back ({exc}): "
                f"what it held is in '{os.path.join(dfd.path, where)}'; move it back to "
                f"'{path}'") from None
        saved = None if aside is None else os.path.join(dfd.path, aside)
        if back and not _unlink_if(dfd, tmp, entry):
            # a third thing put at the path between the two swaps: the newest, kept too
            saved = os.path.join(dfd.path, save_aside(dfd, tmp, name))
        if expect is not None:
            self._check_replaced(dfd, name, kept, path, entry, expect[0], kept_st)
        self.replaced.append((folder, kept, identity(kept_st)))
        self._hold(dfd, folder)
        raise Changed([path], saved, newer_saved=back and saved is not None)

    @staticmethod
    def _check_replaced(dfd: Folder, name: str, kept: str, path: str, entry: Entry,
                        was: Entry | None, kept_st: os.stat_result | None = None) -> None:
        """The file just replaced at ``name``, still held as ``kept``, must hold ``was``
        (or already the target). Else it goes back in place, its inode and all (a
        descriptor held open on it writes on into the file at ``name``), and the rewind
        stops with ``Changed``. Where it cannot go back, it is given a name no clean-up
        removes, which the error names. ``kept_st``: ``kept``'s ``lstat`` made right after
        its link; a regular file is then opened (and checked one) without a second."""
        if kept_st is not None and stat.S_ISREG(kept_st.st_mode):
            now = _file_entry(dfd, kept)
        else:
            now = disk_entry(dfd, kept)
        if _same(now, was) or _same(now, entry):
            return
        too: list[str] = []  # a second save that a third kept from going back
        try:
            # over the rewind's own write only: a save renamed over it since is newer
            saved = put_back(dfd, kept, name, _holds(dfd, entry), too)
        except OSError as exc:
            try:
                saved = save_aside(dfd, kept, name)
            except OSError:
                saved = kept  # a temporary name: a roll-back's clean-up may remove it
            # a second save left aside before the refusal is named too (redteam38)
            also = "".join(f"; a save made in between is in '{os.path.join(dfd.path, t)}'"
                           for t in too)
            raise Unsafe(
                f"'{path}' changed while the rewind ran and could not be put back ({exc}): "
                f"what it held is in '{os.path.join(dfd.path, saved)}'{also}; "
                + (f"look at each and move the one to keep back to '{path}'" if too
                   else f"move it back to '{path}'")) from None
        raise Changed([path], None if saved is None else os.path.join(dfd.path, saved),
                      also=[os.path.join(dfd.path, t) for t in too])

    def restore_late(self, plan: Plan) -> list[str]:
        """After a crash: put back in place each replaced file, still held by its second
        name (``kept_name``), that holds neither what the plan expected there nor the
        target: a write that landed before the rename of a rewind killed before its look
        at the replaced file (``_check_replaced``). Only over the rewind's own write: what
        the user saved there since the crash stays, and the older file is saved aside
        (``putback.py``). Returns those paths, kept as they were. Called before ``apply``
        (a recovery that fails is rolled back, and its clean-up would remove them)."""
        if self.op is None:
            return []
        targets = {**plan.write, **plan.create}
        # by folder, by second name's tag: one listing a folder, not one a path
        by_folder: dict[str, dict[str, list[str]]] = {}
        for path in sorted(targets):
            tags = by_folder.setdefault(path.rpartition("/")[0], {})
            tags.setdefault(kept_name(self.op, path), []).append(path)
        late: list[str] = []
        with open_root(self.workspace) as root:
            for _folder, tags in sorted(by_folder.items()):
                folder = _open_folder(root, next(iter(tags.values()))[0])
                if folder is None:
                    continue
                with folder:
                    try:
                        listed = folder.listdir()
                    except OSError:
                        continue
                    names = sorted(n for n in listed if n.startswith(TMP_PREFIX))
                    saved = [n for n in listed if SAVED_INFIX in n]
                    # the paths whose replaced file still has its second name: a swap ran
                    # there and its release did not (``_swapped_out``)
                    held = [p for n in names
                            for p in tags.get((rewindnames.parse(n)
                                               or rewindnames.parse_old(n) or (0, ""))[1], [])]
                    for kept in names:
                        # the old shape too: a journal an older Turnback left (redteam26)
                        got = rewindnames.parse(kept) or rewindnames.parse_old(kept)
                        if got is None:
                            continue
                        paths = tags.get(got[1])
                        if paths is None:
                            # not a second name: maybe a file the swap took out, which the
                            # clean-up would remove as a write of this op
                            late += [p for p in self._swapped_out(
                                folder, _folder, kept, got, tags, held, plan) if p not in late]
                            continue
                        st = _lstat_or_none(folder, kept)
                        if st is None or not stat.S_ISREG(st.st_mode) or not _owned(st):
                            continue  # a link or a folder so named, another user's: never moved
                        if not rewindnames.writer_gone(got[0], st.st_ctime):
                            continue  # its writer still holds it
                        now = _file_entry(folder, kept)  # one lstat a name, not two
                        if now is None or any(_same(now, plan.before.get(p)) or _same(
                                now, targets[p]) for p in paths):
                            continue
                        if any(_one_file(folder, kept, other) for other in
                               [p.split("/")[-1] for p in paths] + saved):
                            # the path's own file (killed before the rename: an edit in place
                            # since is there already), or one a put back killed between its
                            # link and its unlink moved already: the clean-up frees this name
                            continue
                        name = paths[0].split("/")[-1]
                        try:
                            if len(paths) == 1:
                                put_back(folder, kept, name,
                                         _holds(folder, targets[paths[0]]))
                            else:  # two paths' tags alike (1 in 2**32 a pair): whose is unknown
                                save_aside(folder, kept, name)
                        except OSError:
                            continue  # left to the clean-up: nothing better to do here
                        late += [p for p in paths if p not in late]
        return late

    def _swapped_out(self, folder: Folder, where: str, name: str, got: tuple[int, str],
                     tags: dict[str, list[str]], held: list[str], plan: Plan) -> list[str]:
        """After a crash: ``name``, a file being written of this op in ``where`` by its
        name (``write_tag``), that holds none of the plan's files there nor a part of one
        being written, where a path of ``held`` (its replaced file still kept by its second
        name) holds the rewind's write, is what a swap took out of that path (a save
        renamed over it since the second name's link) in a rewind killed before its look
        at it (``_stranger_out``). The clean-up removed it as the op's own write: the save
        lost (redteam34). Put back over the rewind's write where one path is so, else
        saved aside; the paths so kept. A name with another link (the file kept, taken
        out) is left to the clean-up; an empty file is taken for a write cut short."""
        pid, tag = got
        if self.op is None or tag != write_tag(self.op, where, "f", pid, tag[:4]):
            return []
        swapped = [p for p in held if _same(disk_entry(folder, p.split("/")[-1]),
                                            plan.target(p))]
        if not swapped:
            return []  # no swap ran here unreleased: a write cut short, or an older leftover
        st = _lstat_or_none(folder, name)
        if (st is None or not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or not _owned(st)
                or not rewindnames.writer_gone(pid, st.st_ctime)):
            return []
        paths = [p for ps in tags.values() for p in ps]
        known = [e for p in paths for e in (plan.before.get(p), plan.target(p))
                 if e is not None and e.mode != LINK]
        now = _file_entry(folder, name)
        # by bytes, not mode: a write is made 0600 and given its bits after its last byte
        if now is None or any(now.hash == e.hash for e in known) or any(
                self._begins(folder, name, now, e) for e in known):
            return []
        try:
            if len(swapped) == 1:
                put_back(folder, name, swapped[0].split("/")[-1],
                         _holds(folder, plan.target(swapped[0])))
            else:  # which path it came out of is unknown: kept beside them, no path named
                save_aside(folder, name, "")
                return []
        except OSError:
            return []  # left to the clean-up: nothing better to do here
        return swapped

    def _begins(self, folder: Folder, name: str, now: Entry, target: Entry) -> bool:
        """Whether the file ``name`` (``now``) holds the start of ``target``'s bytes: a
        write of it cut short by the crash."""
        if now.size >= target.size:
            return False
        try:
            want = self.objects.get(BLOB, target.hash)[:now.size]
            fd = folder.open(name, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY)
        except (TurnbackError, OSError):
            return True  # cannot tell: removed, as before
        try:
            got = b""
            while len(got) < now.size and (chunk := os.read(fd, now.size - len(got))):
                got += chunk
        except OSError:
            return True
        finally:
            os.close(fd)
        return got == want

    def _keep_replaced(self, dfd: Folder, name: str, path: str = "",
                       seen: os.stat_result | None = None) -> str | None:
        """Give the regular file ``name`` a second, temporary name before a rename replaces
        it, so the rename does not free its blocks: on ext4 freeing a replaced file's
        blocks was most of a rename's cost, 0.79 ms a file against 0.05 ms this way
        (medians, load 9.7, bench/probes/rewind/rename_replaced.py; the unlink comes later,
        ``release``).
        None, and a plain rename, where there is no such file or no hard link (FAT, a full
        link count): the same result either way (a file system found to make none,
        ``fs/hardlinks``, is not tried again); and with folders reached by path
        (Windows), where a link swapped into the path could put that name outside the
        workspace, out of ``release``'s reach."""
        if not isinstance(dfd, FdFolder):
            return None
        try:
            st = seen if seen is not None else dfd.lstat(name)  # ``seen``: the caller's look
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or hardlinks.known_without(st.st_dev):
            return None
        tag = os.urandom(4).hex() if self.op is None else kept_name(self.op, path)
        kept = rewindnames.make(os.getpid(), tag)
        try:
            dfd.link(name, kept)
        except OSError:
            # a plain rename, whatever the refusal: it replaces the file all the same. The
            # put back's question asked (once a device), so that where the file system has
            # no links the next files are not tried
            with contextlib.suppress(OSError):
                hardlinks.makes_links(dfd)
            return None
        return kept

    def _parent(self, root: Folder, parts: list[str], path: str) -> Folder:
        """Open the folder that will hold ``path``, turning files in the way into folders."""
        try:
            return open_dir(root, parts[:-1], create=True)
        except FileExistsError:
            pass
        # a tracked file stands where the target has a folder (file <-> folder swap):
        # removals ran first, so whatever is left there is untracked
        raise Conflict(
            f"cannot restore '{path}': a file stands where the checkpoint has a folder; move it "
            "away and rewind again"
        )


def untouched(workspace: str, plan: Plan, op: str, *, since_before: bool = False) -> bool:
    """Whether no path of ``plan`` shows a sign of it having been applied: none holds what
    it writes there, none it removes is gone, and no temporary name of rewind ``op``
    stands in a folder it writes to. (What each path held before is not needed: a
    journal whose safety checkpoint is missing has nothing to say it with.)

    ``since_before``: also none holds anything but what it held before (``plan.before``,
    from the safety checkpoint). A path changed since the safety scan may be the rewind's
    write changed again: a rewind answered and then left to the next open to record
    (``leave_unfinished``, or a kill once its second names were freed), its files edited
    meanwhile by the agent told it was made, showed no other sign, and was emptied
    unrecorded, its undo gone (redteam51). Changed, it is finished: its edits kept."""
    tags = _tags(op, plan)
    removed: dict[str, list[str]] = {}  # the names a removal of the plan takes, by folder
    for path in plan.remove:
        folder, _, name = path.rpartition("/")
        removed.setdefault(folder, []).append(name)
    try:
        with open_root(workspace) as root:
            for path in plan.remove:
                parts = path.split("/")
                with open_dir(root, parts[:-1], create=False) as dfd:
                    if _lstat_or_none(dfd, parts[-1]) is None:
                        return False
                    if since_before and not _same(disk_entry(dfd, parts[-1]),
                                                  plan.before.get(path)):
                        return False
            for path, entry in {**plan.write, **plan.create}.items():
                parts = path.split("/")
                try:
                    dfd = open_dir(root, parts[:-1], create=False)
                except (FileNotFoundError, NotADirectoryError, NotAFolder):
                    if since_before and plan.before.get(path) is not None:
                        return False  # its folder gone since: changed
                    continue  # its folder is not there: nothing written in it
                with dfd:
                    names = dfd.listdir()
                    now = disk_entry(dfd, parts[-1])
                    # the file a removal of the plan names, found by another spelling (a
                    # case-insensitive file system), is that removal's to look at, not this
                    other = now is not None and _other_spelling(
                        parts[-1], names, removed.get("/".join(parts[:-1]), ()))
                    if not other and (_same(now, entry) or (
                            since_before and not _same(now, plan.before.get(path)))):
                        return False
                    folder = "/".join(parts[:-1])
                    for name in names:
                        st = (_lstat_or_none(dfd, name) if name.startswith(TMP_PREFIX)
                              else None)
                        if st is not None and _of_op(op, folder, tags[folder], name,
                                                     st) is not None:
                            return False
    except (OSError, Unsafe, NotAFolder):
        return False  # cannot tell: left to the refusal that names it
    return True


def _other_spelling(name: str, names: list[str], removed: Sequence[str]) -> bool:
    """Whether ``name``, found in a folder listed as ``names`` though not listed by that
    spelling (so a case- or normalization-insensitive file system's), is a name the plan
    removes (``removed``, names in that folder) that is still listed: a case-only rename
    not yet made. No sign of the rewind then: taken for one, a rename killed before any
    file was applied at the next open (redteam51). Made, the listing holds ``name``'s
    spelling. (Names folded loosely, NFC and ``casefold``: on a file system that folds
    none, a name found is listed as it is, and this is never asked.)"""
    if name in names:
        return False
    key = _loose_key(name)
    return any(other in names and _loose_key(other) == key for other in removed)


def _loose_key(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def _exact(rel: str) -> str:
    return rel


def check_conflicts(workspace: str, plan: Plan, skipped: dict[str, str] | None = None,
                    key: Callable[[str], str] = _exact) -> None:
    """Refuse, before anything is touched, a plan that would stop halfway or destroy
    something the safety checkpoint could not capture.

    A file to restore may stand where a folder now holds files the plan does not
    remove (ignored or unselected files), or below something that is not a folder
    and is not removed first; or where the safety checkpoint saw no file, something may
    stand that it could not take (an ignored file, one over the size cap, an unreadable
    one: ``skipped`` says why, by path). ``key``: the one spelling of names that are one
    file on this file system (``NameRules.key``): on a case-insensitive one, ``README.md``
    found where ``readme.md`` is created is the ``README.md`` the plan removes first.
    """
    removed = {key(p) for p in plan.remove}
    uncaptured: list[str] = []
    # each folder on the way looked at once, not once a path below it (10 paths in SPEC's
    # workspace shared ~10% of their ~50 looks); what was found: a folder (True) or nothing
    found: dict[str, bool] = {}
    for path in sorted({**plan.write, **plan.create}):
        parts = path.split("/")
        folders_stand = True  # every folder on the way is a real folder now
        for depth in range(1, len(parts)):
            anc = "/".join(parts[:depth])
            known = found.get(anc)
            if known is not None:
                if known:
                    continue
                folders_stand = False
                break
            try:
                st = os.lstat(os.path.join(workspace, anc))
            except (FileNotFoundError, NotADirectoryError):
                found[anc] = False
                folders_stand = False
                break
            if stat.S_ISDIR(st.st_mode):
                found[anc] = True
                continue
            if key(anc) not in removed:
                if stat.S_ISLNK(st.st_mode):
                    raise Unsafe(f"cannot restore '{path}': '{anc}' is a symlink; refusing to "
                                 "write through it (remove the link and rewind again)")
                raise Conflict(
                    f"cannot restore '{path}': '{anc}' is a file the rewind does not replace; "
                    "move it away (or include it in the paths) and rewind again"
                )
            found[anc] = False  # a file the plan removes first: made a folder afresh
            folders_stand = False
            break
        if not folders_stand:
            continue  # its folders are made afresh: nothing stands at the path (and looking
            # there would follow a symlink the plan removes, maybe out of the workspace)
        full = os.path.join(workspace, path)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            uncaptured.append(path)  # cannot even be looked at: nothing vouches for it
            continue
        if path in plan.create and not stat.S_ISDIR(st.st_mode):
            if key(path) in removed:
                continue  # the file of another spelling, which the plan removes first
            try:
                with open_root(workspace) as root:
                    dfd = open_dir(root, parts[:-1], create=False)
            except (OSError, Unsafe):
                uncaptured.append(path)  # changed since just now: nothing vouches for it
                continue
            with dfd:
                now = disk_entry(dfd, parts[-1])
            if now is not None and not _same(now, plan.create[path]):
                uncaptured.append(path)
            continue
        if stat.S_ISDIR(st.st_mode):
            for dirpath, _dirs, files in walk(full):
                for f in files:
                    rel = os.path.relpath(os.path.join(dirpath, f), workspace)
                    if key(rel) not in removed:
                        raise Conflict(
                            f"cannot restore file '{path}': the folder of that name holds "
                            f"'{rel}', which Turnback does not track (ignored files); move it "
                            "away and rewind again"
                        )
    if uncaptured:
        why = skipped or {}
        shown = "; ".join(
            f"'{p}' ({why.get(p) or 'ignored, or made after the safety checkpoint'})"
            for p in uncaptured[:5]) + (f"; and {len(uncaptured) - 5} more"
                                        if len(uncaptured) > 5 else "")
        raise Conflict(
            f"the rewind would overwrite what the safety checkpoint could not capture: {shown}. "
            "Nothing was changed: move those files away (or rewind other paths) and rewind "
            "again"
        )


def _unlink_own(dfd: Folder, name: str, ident: tuple[int, int], aside: str) -> bool:
    """Unlink ``name`` in ``dfd`` if it is still the file ``ident`` names; whether it was
    unlinked (False too when nothing is there). Another file standing there (a name taken
    since) is left as it is: the name is moved to ``aside`` (a name of this rewind's own,
    ``Applier._aside``) and looked at there before the unlink (``remove_checked``). A look
    then an unlink by name deleted a file renamed to it between the two (trust25's open
    item, closed by swap27)."""
    st = _lstat_or_none(dfd, name)
    if st is None or identity(st) != ident or not stat.S_ISREG(st.st_mode):
        return False
    try:
        return remove_checked(dfd, name, aside, st, lambda now: identity(
            now) == ident and stat.S_ISREG(now.st_mode))
    except OSError:
        return False


def _swap(dfd: FdFolder, a: str, b: str) -> bool:
    """``a`` and ``b`` swapped in ``dfd`` (``fs/exchange.py``); False where no swap is, or
    ``b`` is gone (removed since the look: a rename then replaces nothing)."""
    try:
        return exchange(dfd.fd, dfd.path, a, b)
    except FileNotFoundError:
        return False


def _holds(dfd: Folder, entry: Entry | None) -> Callable[[str], bool]:
    """Whether a name in ``dfd`` holds ``entry`` (the rewind's own write there): the look
    ``put_back`` makes before it replaces it, and again once it moved it aside."""
    return lambda name: _same(disk_entry(dfd, name), entry)


def _create(dfd: Folder, tmp: str, name: str, path: str) -> bool:
    """Rename ``tmp`` to ``name``, where nothing stood at the look, without replacing what
    came there since (``fs/exchange.py``): a save renamed over the path between the look
    and a plain rename was replaced, its bytes in no checkpoint (trust28). ``Changed``
    naming ``path`` where something stands there now (it is left untouched); False where
    there is no such rename (folders by path, an older kernel or C library, a file system
    without the flag): the caller renames as before."""
    if not isinstance(dfd, FdFolder):
        return False
    try:
        return rename_no_replace(dfd.fd, dfd.path, tmp, name)
    except FileExistsError:
        raise Changed([path]) from None


def _took_out_own(dfd: FdFolder, tmp: str, kept_st: os.stat_result) -> bool:
    """Whether what a swap took out at ``tmp`` is the file kept (``kept_st``: its second
    name's ``lstat``); if so that name of it is unlinked (the second name holds it)."""
    st = _lstat_or_none(dfd, tmp)
    if st is None or not stat.S_ISREG(st.st_mode) or identity(st) != identity(kept_st):
        return False
    _unlink_quietly(dfd, tmp)
    return True


def _unlink_if(dfd: Folder, tmp: str, entry: Entry) -> bool:
    """Unlink ``tmp`` if it holds ``entry`` (the rewind's own write, swapped out again);
    whether it did (True too when nothing is there)."""
    if _lstat_or_none(dfd, tmp) is None:
        return True
    if not _same(disk_entry(dfd, tmp), entry):  # a link written too: not opened
        return False
    _unlink_quietly(dfd, tmp)
    return True


def _unlink_made(dfd: Folder, name: str, made: os.stat_result) -> None:
    """Unlink the second name ``name`` just linked (``made``: its ``lstat``), whatever its
    type, only if it still names that very file; anything standing there since is left."""
    st = _lstat_or_none(dfd, name)
    if st is not None and identity(st) == identity(made) and stat.S_IFMT(
            st.st_mode) == stat.S_IFMT(made.st_mode):
        _unlink_quietly(dfd, name)


def _unlink_quietly(dfd: Folder, name: str) -> None:
    try:
        dfd.unlink(name)
    except OSError:
        pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
