"""The names of a rewind's temporary files in the workspace:
``.turnback-tmp-<pid>-<8 hex tag><4 hex mark>``.

A rewind writes each file to such a name and renames it into place, and keeps a replaced file
by such a name until its answer (``rewind/apply.py``); a crash, or a folder renamed past the
rewind's reach, leaves one. The tag says which rewind made it: ``rewind/apply.py`` derives it
from the journal's op id and the path (a second name) or the folder (a file being written),
so a clean-up removes only this rewind's names. The mark (4 hex of a CRC of the rest, as in
``tempnames.py``: a check, not a secret) says the name is one of these at all, without the op:
the scan leaves such a name out of every checkpoint (``snapshot/ignore.py``), live or left,
where a user's look-alike (``.turnback-tmp-123-deadbeef``, the shape before ``trust24``)
passes 1 time in 65,536. Before, any name of the shape was removed and taken (trust24).
"""

from __future__ import annotations

import os
import re
import sys
import time
import zlib

from .tempnames import PID_MAX, _gone

PREFIX = ".turnback-tmp-"
# seconds a process's start, read against the wall clock, may be off (clock ticks, a slew)
CLOCK_SLACK = 1.0
# Patterns as text, compiled by ``re`` at their first use (and kept in its cache): only a
# name with ``PREFIX`` is matched, which a fresh checkpoint's imports need not pay for
_NAME = r"\.turnback-tmp-([0-9]{1,10})-([0-9a-f]{8})([0-9a-f]{4})\Z"
# the shape before trust24, which a journal a crash left under an older Turnback may still name
_OLD_NAME = r"\.turnback-tmp-([0-9]{1,10})-([0-9a-f]{8})\Z"


def _mark(head: str) -> str:
    return f"{zlib.crc32(head.encode('ascii')) & 0xFFFF:04x}"


def make(pid: int, tag: str) -> str:
    """The temporary name of process ``pid`` with ``tag`` (8 hex)."""
    head = f"{PREFIX}{pid}-{tag}"
    return head + _mark(head)


def probe(pid: int, nonce: str) -> str:
    """A name for ``fs/hardlinks``'s probe files in process ``pid``: ``nonce`` (4 hex) and 4
    of a CRC of it with the pid, which ``is_probe`` tells again. No op made it, so a crash
    between its open and its unlink left an empty file no clean-up took (redteam38's open
    item): ``rewind/apply.py``'s ``remove_temps`` removes an empty one whose writer is gone
    (trust30)."""
    return make(pid, nonce + _probe_check(pid, nonce))


def is_probe(pid: int, tag: str) -> bool:
    """Whether ``tag`` (of a name ``parse`` read, with its ``pid``) is a probe's tag."""
    return tag[4:] == _probe_check(pid, tag[:4])


def _probe_check(pid: int, nonce: str) -> str:
    return f"{zlib.crc32(f'probe{chr(0)}{pid}{chr(0)}{nonce}'.encode('ascii')) & 0xFFFF:04x}"


def parse(name: str) -> tuple[int, str] | None:
    """(pid, tag) of a name ``make`` gives, down to its mark; None for anything else."""
    m = re.match(_NAME, name)
    if m is None or m.group(3) != _mark(name[:m.end(2)]):
        return None
    return int(m.group(1)), m.group(2)


def parse_old(name: str) -> tuple[int, str] | None:
    """(pid, tag) of a name of the shape rewinds gave before ``trust24`` (no mark): only a
    recovery of that op may take it, and only with a tag the op's own (``kept_name``),
    which binds op and path as the mark cannot (redteam26)."""
    m = re.match(_OLD_NAME, name)
    return None if m is None else (int(m.group(1)), m.group(2))


def is_marked(name: str) -> bool:
    """Whether ``name`` is a rewind's temporary name (the scan's test: a prefix compared
    first, so any other name costs one ``startswith``)."""
    return name.startswith(PREFIX) and parse(name) is not None


def started(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from ``/proc`` (field 22 of
    its ``stat``: clock ticks since boot); None where that is not known (no such process,
    not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
        ticks = int(raw[raw.rindex(b")") + 2:].split()[19])
        boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def writer_gone(pid: int, made: float | None = None) -> bool:
    """Whether the process named in such a name can no longer use it: gone, or this one
    (whose own rewind, or roll-back of it, is the caller), or a process started more than
    ``CLOCK_SLACK`` after ``made`` (the name's ctime: no process makes a name before it
    starts), which has the pid by reuse: after a reboot pids start again from 1, so a
    killed server's pid is likely some other process's at the next open (redteam26). A
    pid past ``PID_MAX`` is no process's: never gone, so such a name is left. Windows has
    no signal-0 probe (``os.kill`` ends the process there): the op's tag alone decides,
    as the shape did."""
    if not 0 < pid <= PID_MAX:
        return False
    if pid == os.getpid() or sys.platform == "win32" or _gone(pid):
        return True
    if made is None:
        return False
    start = started(pid)
    return start is not None and start > made + CLOCK_SLACK
