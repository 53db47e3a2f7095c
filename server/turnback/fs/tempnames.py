"""The names of the store's temporary files: ``.tmp-<name>.<pid>.<8 hex>``, made beside the
file they will replace (``fs/atomic.py``, ``fs/replacing.py``, ``objects/objectstore.py``).

A crash leaves at worst one, which gc and fsck find by ``TMP_PREFIX`` alone: the rest only
tells a person which file it was for and which process made it. The rewind's own temporary
names in the workspace are another family (``rewind/apply.py``: no name in them, recognised
whole).
"""

from __future__ import annotations

import os

TMP_PREFIX = ".tmp-"
# the longest name ext4, XFS, btrfs and APFS take, in bytes; NTFS counts UTF-16 units, of
# which a name never has more than its UTF-8 bytes
NAME_MAX = 255


def temp_name(name: str) -> str:
    """A new temporary name for a file that will be renamed to ``name``; its random digits
    make it unused in practice, and the caller creates it exclusively. ``name``'s part is
    cut (at a character's end) where the whole would be longer than ``NAME_MAX``: a
    255-byte name could not be written at all."""
    tail = f".{os.getpid()}.{os.urandom(4).hex()}"
    room = NAME_MAX - len(TMP_PREFIX) - len(tail)
    raw = os.fsencode(name)
    if len(raw) > room:
        # the bytes of a character cut in two, or of a name held with surrogate escapes
        # (not UTF-8), are dropped: what is left is a name every file system takes
        name = raw[:room].decode("utf-8", "ignore")
    return f"{TMP_PREFIX}{name}{tail}"
