"""The names of the store's temporary files: ``.tmp-<name>.<pid>.<4 hex><4 hex mark>``, made
beside the file they will replace (``fs/atomic.py``, ``fs/replacing.py``,
``objects/objectstore.py``).

A crash leaves at worst one. In the store gc and fsck find it by ``TMP_PREFIX`` alone. In the
user's folders (an agent's hook settings in the workspace, an export) nothing else would:
the next write of the same file removes it (``leftovers``), but only one that is certainly
ours. Its name is the one ``temp_name`` gives that file, down to the mark (4 hex of a hash
of the rest: a look-alike name a person or a tool made passes 1 time in 65,536); the
process named in it is gone; the file is ours (our uid), a regular file, and older than
``LEFTOVER_AGE_S`` (a writer in another pid namespace, whose pid we cannot see, has long
renamed it by then). The rewind's own temporary names in the workspace are another family
(``rewind/apply.py``: no name in them, recognised whole).
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time
import zlib

TMP_PREFIX = ".tmp-"
# the longest name ext4, XFS, btrfs and APFS take, in bytes; NTFS counts UTF-16 units, of
# which a name never has more than its UTF-8 bytes
NAME_MAX = 255
# a leftover younger than this is never removed: a write takes milliseconds
LEFTOVER_AGE_S = 60
# a pid_t is a C int: a larger pid in a name is no writer's (and os.kill raised OverflowError
# for it, which failed the write that swept: redteam19)
PID_MAX = 2**31 - 1
# the last one; compiled by ``re`` at its first use (only a candidate with TMP_PREFIX)
_TAIL = r"\.([0-9]{1,10})\.([0-9a-f]{4})([0-9a-f]{4})\Z"


def _mark(raw_part: bytes, tail: str) -> str:
    """4 hex that only ``temp_name`` puts after ``tail`` (``.<pid>.<4 hex>``) in a name for
    ``raw_part`` (its bytes): a check, not a secret (a CRC; blake3 cost each store write
    1.1 us more, bench/RESULTS.md ``trust19``)."""
    return f"{zlib.crc32(tail.encode('ascii'), zlib.crc32(raw_part)) & 0xFFFF:04x}"


def _cut(name: str, pid: int) -> bytes:
    """``name``'s bytes, cut (at a character's end) so that the whole temporary name fits
    ``NAME_MAX`` with this pid."""
    room = NAME_MAX - len(TMP_PREFIX) - len(str(pid)) - 10
    raw = os.fsencode(name)
    if len(raw) > room:
        # the bytes of a character cut in two, or of a name held with surrogate escapes
        # (not UTF-8), are dropped: what is left is a name every file system takes
        return raw[:room].decode("utf-8", "ignore").encode("utf-8")
    return raw


def temp_name(name: str) -> str:
    """A new temporary name for a file that will be renamed to ``name``; its random digits
    make it unused in practice, and the caller creates it exclusively. ``name``'s part is
    cut (at a character's end) where the whole would be longer than ``NAME_MAX``: a
    255-byte name could not be written at all."""
    pid = os.getpid()
    raw = _cut(name, pid)
    tail = f".{pid}.{os.urandom(2).hex()}"
    return f"{TMP_PREFIX}{os.fsdecode(raw)}{tail}{_mark(raw, tail)}"


def _gone(pid: int) -> bool:
    """Whether no process has this pid (one another user runs, or a pid reused, counts as
    there: its file is left; so does one no process can have, past ``PID_MAX``)."""
    if not 0 < pid <= PID_MAX or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def made_for(name: str, candidate: str) -> bool:
    """Whether ``candidate`` is a name ``temp_name(name)`` gives, down to its mark (in some
    process: the file's writer is not looked at here)."""
    if not candidate.startswith(TMP_PREFIX):
        return False
    m = re.search(_TAIL, candidate)
    if m is None:
        return False
    raw = _cut(name, int(m.group(1)))
    return (candidate[len(TMP_PREFIX): m.start()] == os.fsdecode(raw)
            and m.group(3) == _mark(raw, candidate[m.start(): m.end(2)]))


def _writer(candidate: str) -> int:
    """The pid in a name ``made_for`` accepted."""
    m = re.search(_TAIL, candidate)
    assert m is not None
    return int(m.group(1))


def is_leftover(name: str, candidate: str, st: os.stat_result, now: float | None = None) -> bool:
    """Whether ``candidate`` (its ``lstat`` in ``st``), beside ``name``, is a temporary file
    ``temp_name(name)`` made whose writer died before its rename: see the module's note."""
    if sys.platform == "win32":
        return False  # no signal-0 probe of a pid there (os.kill would end the process)
    if not made_for(name, candidate):
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        return False
    if (time.time() if now is None else now) - st.st_mtime < LEFTOVER_AGE_S:
        return False
    return _gone(_writer(candidate))
