"""Keeping a store private: owner-only modes, and never committed by the workspace's git.

A store holds copies of every workspace file, ``.env`` and keys included, so it is
readable by its owner alone: folders 0700, files 0600, whatever the process umask
(the modes are passed to each ``mkdir``/``open``; the umask itself is left alone, as
the same process writes workspace files that must keep it). A store made before
(0755/0644 under the usual umask 022) is tightened once when opened: the root's own
mode is changed last, so a root at 0700 means the walk is done and later opens pay
one ``lstat``.

``<store>/.gitignore`` holds ``*``: a ``git add -A`` in the workspace stages nothing
of a store kept inside it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import storeroots
from .folders import Folder, chmod_fd, is_link, open_root
from .osflags import O_BINARY, O_CLOEXEC, O_NONBLOCK, POSIX_MODES

FILE_MODE = 0o600
DIR_MODE = 0o700
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = b"# Turnback's store: private history, never to be committed\n*\n"

# O_NONBLOCK: a FIFO planted in the store must not hang the walk on open (a folder's
# open refuses a link at its last name: fs/folders.py)
_FILE_FLAGS = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC
# Without POSIX owners and modes (osflags.POSIX_MODES: Windows) a store is as private as
# the folder's access control lists make it, which Turnback does not change
# (docs/RELIABILITY.md)


def refuse_foreign(root: Path, *, chosen: bool) -> None:
    """Refuse a store that is a link (unless the user named that path) or that belongs
    to another user: such a store could hold anything, and its journal would be applied.

    A store inside the workspace may come with a cloned repository or a synced folder;
    another user of the machine may have made it in a shared folder. Like git's "dubious
    ownership" check, root may open a store of the user who ran ``sudo``.
    """
    from ..errors import Unsafe

    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) and not chosen:
        raise Unsafe(
            f"the store {root} is a symlink; Turnback does not follow a link to its store. "
            "Remove the link, or keep the store elsewhere with --store DIR or TURNBACK_STORE")
    if not chosen and stat.S_ISDIR(st.st_mode):
        _refuse_inner_links(root)
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid is None or st.st_uid == euid:
        return
    if euid == 0 and os.environ.get("SUDO_UID") == str(st.st_uid):
        return
    raise Unsafe(
        f"the store {root} belongs to user id {st.st_uid}, not to you ({euid}); a store made "
        "by someone else is not opened. Have its owner remove it, or keep your store "
        "elsewhere with --store DIR or TURNBACK_STORE")


def _may_lead_to_a_folder(link: str) -> bool:
    """A link to a folder, or one that leads nowhere yet (its target may be made later, by
    anyone who can write where it points). A link to a file (a planted ``checkpoints.jsonl``,
    ``run/cli.sock``) is left to the reads and appends, which never follow one."""
    try:
        return stat.S_ISDIR(os.stat(link).st_mode)
    except OSError:
        return True


def _refuse_inner_links(root: Path) -> None:
    """Refuse a store whose own folders, or what they hold, include a link to a folder.

    Turnback never makes a link in its store, and writes there by path: a shipped store
    whose ``sessions/`` or ``cache/blame/`` is a link to a folder outside would have
    sessions, the stat cache and saved walks written (and read back) there. The store's
    entries and those of its folders but ``sessions/`` are looked at (one listing each, no
    ``stat``: the kind comes with the listing); ``sessions/`` and deeper levels hold only
    files Turnback opens without following a link, and the sharing repository (git's).
    """
    from ..errors import Unsafe

    def links(folder: str) -> tuple[list[str], list[str]]:
        found, dirs = [], []
        try:
            with os.scandir(folder) as it:
                for de in it:
                    # a junction is Windows' link to a folder (is_junction: Python 3.12)
                    if getattr(de, "is_junction", bool)() or (
                            de.is_symlink() and _may_lead_to_a_folder(de.path)):
                        found.append(de.path)
                    elif de.is_dir(follow_symlinks=False):
                        dirs.append(de.path)
        except OSError:
            pass  # unreadable or gone: whatever opens it next says so
        return found, dirs

    found, dirs = links(str(root))
    for d in dirs:
        # sessions/ holds only files, each opened without following a link, and may hold
        # thousands: not listed on every open
        if not found and os.path.basename(d) != "sessions":
            found = links(d)[0]
    if found:
        raise Unsafe(
            f"the store {root} holds a symbolic link to a folder (or to nothing), {found[0]}; "
            "Turnback makes none there "
            "and does not write through one (a store that came with a repository or a "
            "synced folder may). Remove the link, or keep the store elsewhere with "
            "--store DIR or TURNBACK_STORE")


def make_dir(path: Path) -> None:
    """``path`` and its missing parents, each 0700 (``mkdir -p`` would make parents 0755);
    in a store this process opened, without following a link (``fs/instore.py``)."""
    if storeroots.find(path) is not None:
        from . import instore  # it imports this module

        instore.make_folder(path)
        return
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        if path.parent == path:
            raise
        make_dir(path.parent)
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:  # made meanwhile by another writer
            pass


def create_file(path: Path | str) -> int:
    """A new file at ``path`` (which must not exist), 0600, open for writing."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC | O_BINARY,
                   FILE_MODE)


def make_root(root: Path) -> None:
    """The root of a new store: parents as ``mkdir -p`` makes them (they are not the
    store's), the root itself 0700 even if it existed (an empty folder given as store)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(root, DIR_MODE)
    except FileExistsError:
        pass
    if POSIX_MODES:
        with open_root(str(root)) as folder:  # the root as resolved by the caller
            folder.chmod_self(DIR_MODE)


def write_gitignore(root: Path) -> None:
    """``<root>/.gitignore`` saying ``*`` (kept if any entry of that name is there)."""
    try:
        fd = create_file(root / GITIGNORE)
    except FileExistsError:
        return
    try:
        os.write(fd, GITIGNORE_TEXT)
    finally:
        os.close(fd)


def keep_private(root: Path) -> bool:
    """On opening an existing store: tighten it if its root is not 0700 yet (one
    ``lstat`` when it is), and add its ``.gitignore`` if missing (one more ``lstat``).

    Returns whether a tightening walk ran. A store of another user is left alone (its
    modes cannot be changed by this process, and a walk on every open would be wasted).
    """
    walked = False
    try:
        st = os.lstat(root)
    except OSError:
        return False
    if not POSIX_MODES or st.st_uid != os.geteuid():
        return False
    try:
        os.lstat(os.path.join(root, GITIGNORE))
    except FileNotFoundError:
        write_gitignore(root)
    except OSError:
        pass
    if stat.S_IMODE(st.st_mode) != DIR_MODE:
        tighten(root)
        walked = True
    return walked


def tighten(root: Path) -> int:
    """Make every folder below ``root`` 0700 and every file 0600, then ``root`` itself.

    Symlinks are never followed nor changed: every folder and file is opened without
    following a link (``fs/folders.py``) and changed through its handle, so a link planted
    or swapped in cannot redirect a ``chmod`` outside the store. Entries that cannot be
    changed (gone, not ours) are skipped. Returns the number of entries changed.
    """
    with open_root(str(root)) as folder:  # the root as resolved by the caller
        changed = _tighten_dir(folder)
        if stat.S_IMODE(folder.stat_self().st_mode) != DIR_MODE:
            folder.chmod_self(DIR_MODE)  # last: a 0700 root says the walk is done
            changed += 1
    return changed


def _tighten_dir(dfd: Folder) -> int:
    changed = 0
    for de in dfd.scandir():
        try:
            st = de.stat(follow_symlinks=False)
        except OSError:
            continue
        if is_link(st):
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                sub = dfd.child(de.name)
            except OSError:
                continue  # replaced by a link meanwhile (ELOOP), gone, or unreadable
            try:
                changed += _tighten_dir(sub)
                if stat.S_IMODE(sub.stat_self().st_mode) != DIR_MODE:
                    sub.chmod_self(DIR_MODE)
                    changed += 1
            except OSError:
                pass
            finally:
                sub.close()
        elif stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) != FILE_MODE:
            try:
                f = dfd.open(de.name, _FILE_FLAGS)
            except OSError:
                continue
            try:
                if stat.S_ISREG(os.fstat(f).st_mode):  # still the file that was listed
                    chmod_fd(f, os.path.join(dfd.path, de.name), FILE_MODE)
                    changed += 1
            except OSError:
                pass
            finally:
                os.close(f)
    return changed
