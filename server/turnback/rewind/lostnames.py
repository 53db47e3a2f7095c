"""Second names the release could not reach where they were made: found by a walk of the
workspace, and unlinked if each is still the very file linked.

``Applier.release`` holds a descriptor of up to ``HELD_FOLDERS`` folders it made second
names in; past the bound it opens each folder again by path. A folder past the bound
renamed between a rewind's answer and its release (an editor's refactoring, a ``git mv``)
kept its second names for good: the journal ends after the release, so no recovery, gc or
``fsck`` looks for them (trust20, trust21 §4, trust24). The releasing process knows each
name, made by itself (its pid is in it) for this op, and the identity (device, inode) of
the file it linked: that proves a name found anywhere is its own. So when a folder cannot
be found, and only then, the release walks the workspace once (no link followed, no
``.git`` or store folder entered) for those names, stopping once all are found; a found
name is moved aside, looked at again and unlinked (``fs/leftovers.remove_checked``).
A folder moved out of the workspace is not found: left as before. The walk goes no deeper
than a checkpoint holds (``MAX_DEPTH``, 512 folders): one frame and one descriptor a level,
folders nested past Python's recursion limit raised ``RecursionError`` out of the release,
which then never recorded the rewind (redteam27).
"""

from __future__ import annotations

import os
import stat

from ..errors import Unsafe
from ..fs import rewindnames
from ..fs.folders import Folder, identity, open_root
from ..fs.leftovers import remove_checked
from ..fs.paths import is_protected_name
from ..objects.trees import MAX_DEPTH


def unlink_lost(workspace: str, lost: dict[str, tuple[int, int]]) -> list[str]:
    """Walk ``workspace`` for the names in ``lost`` (name -> the identity of the file it
    was linked to) and unlink each that is still that regular file; the names unlinked.
    Nothing here fails the release: a folder that cannot be read is passed by."""
    left = dict(lost)
    done: list[str] = []
    try:
        root = open_root(workspace)
    except OSError:
        return done
    with root:
        _walk(root, left, done, 0)
    return done


def _walk(folder: Folder, left: dict[str, tuple[int, int]], done: list[str],
          depth: int) -> None:
    try:
        entries = folder.scandir()
    except OSError:
        return
    below: list[str] = []
    for entry in entries:
        name = entry.name
        if name in left:
            _unlink_found(folder, name, left.pop(name), done)
            if not left:
                return
        elif entry.is_dir(follow_symlinks=False) and not is_protected_name(name):
            below.append(name)
    if depth >= MAX_DEPTH:
        return  # deeper than any checkpoint holds: left, as a folder moved out
    for name in below:
        try:
            child = folder.child(name)
        except (OSError, Unsafe):
            continue  # gone, swapped for a link, unreadable: nothing of ours reached there
        with child:
            _walk(child, left, done, depth + 1)
        if not left:
            return


def _unlink_found(folder: Folder, name: str, ident: tuple[int, int], done: list[str]) -> None:
    try:
        st = folder.lstat(name)
        if identity(st) != ident or not stat.S_ISREG(st.st_mode):
            return  # another file by that name: someone else's
        aside = rewindnames.make(os.getpid(), os.urandom(4).hex())
        if remove_checked(folder, name, aside, st,
                          lambda now: identity(now) == ident and stat.S_ISREG(now.st_mode)):
            done.append(name)
    except OSError:
        pass
