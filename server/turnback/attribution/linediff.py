"""Carrying lines' origins from one version of a file to the next.

Lines the two versions share keep their origin; moved lines keep theirs too; every other
line of the new version takes the step's origin. The diff: the common head and tail are
cut first (found by bisection over list slices, compared in C), so a small edit to a
5,000-line file costs a few list comparisons; only the middle goes to difflib's
``SequenceMatcher`` (the standard library's, ``autojunk`` off: a file's frequent lines
are not noise here). A move is a run of lines removed in one place and added in another,
found in the same step, and counted only when the run holds at least ``MOVE_MIN_CHARS``
non-blank characters (git blame -M's threshold of 20): a lone ``}`` or blank line is
not recognised as moved, it is new.

From a version's bytes to the next (``carry_text``), the common head and tail are found
in the bytes themselves, and only the lines between them are split: after one turn's
small edit to a 5,000-line file, neither version is split whole, and the new version's
unchanged lines are the old version's very objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MOVE_MIN_CHARS = 20


def split_lines(data: bytes) -> list[bytes]:
    """The file's lines, without their ends (a last line without one counts)."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def common_head(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many items (lines, bytes, any sliceable sequence) ``a`` and ``b`` share at their
    start: the largest k with ``a[:k] == b[:k]``, by bisection over slices compared in C
    (items that are the same object compare at once)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_tail(a: Sequence[Any], b: Sequence[Any], start: int = 0) -> int:
    """How many items ``a[start:]`` and ``b[start:]`` share at their end (``start``: a
    common head already counted, which the tail must not overlap)."""
    na, nb = len(a), len(b)
    lo, hi = 0, min(na, nb) - start
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[na - mid : na - lo] == b[nb - mid : nb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True, slots=True)
class Carried(Generic[T]):
    """A version's lines and origins, and how many lines at its head and tail are the old
    version's with their origins (what lies between may differ). A dataclass, not a
    generic NamedTuple: Python 3.10 refuses those."""

    lines: list[bytes]
    origins: list[T]
    head: int
    tail: int


def carry_text(old_data: bytes, old: list[bytes], old_origins: Sequence[T], new_data: bytes,
               fresh: T) -> Carried[T]:
    """``new_data``'s lines and their origins, given the old version's bytes, lines
    (``split_lines(old_data)``) and origins: what ``split_lines`` and ``carry`` give,
    with the common head and tail found in the bytes. Lines up to the last line end in
    the common prefix are the same lines; from there, the common suffix counts from the
    first place that starts a line in both; the lines between are split and diffed
    (``carry`` finds any further equal lines at their ends)."""
    if old_data == new_data:
        return Carried(list(old), list(old_origins), len(old), 0)
    p = common_head(old_data, new_data)
    if (p == len(old_data) and not old_data.endswith(b"\n")) or \
            (p == len(new_data) and not new_data.endswith(b"\n")):
        # one is the other's start up to a last line without its end: that line may be
        # equal or not, as the lines tell
        lines = split_lines(new_data)
        return Carried(lines, carry(old, old_origins, lines, fresh), 0, 0)
    start = old_data.rfind(b"\n", 0, p) + 1  # the common head's whole lines
    s = common_tail(old_data, new_data, start)
    ea, eb = len(old_data) - s, len(new_data) - s
    if not ((ea == start or old_data[ea - 1] == 10) and (eb == start or new_data[eb - 1] == 10)):
        nl = old_data.find(b"\n", ea)  # (within the common suffix: at the same place in both)
        step = len(old_data) - ea if nl < 0 else nl + 1 - ea
        ea, eb = ea + step, eb + step
    # the old lines between (few), then whichever of head and tail spans fewer bytes is
    # counted, the other follows from the number of lines
    unended = 1 if not old_data.endswith(b"\n") else 0  # a last line without its end
    between = old_data.count(b"\n", start, ea) + (unended if ea == len(old_data) > start
                                                    else 0)
    if start <= len(old_data) - ea:
        head = old_data.count(b"\n", 0, start)
        end = head + between
    else:
        tail = old_data.count(b"\n", ea) + (unended if ea < len(old_data) else 0)
        end = len(old) - tail
        head = end - between
    mid = split_lines(new_data[start:eb])
    lines = old[:head]
    lines.extend(mid)
    lines.extend(old[end:])
    origins = list(old_origins[:head])
    origins.extend(carry(old[head:end], old_origins[head:end], mid, fresh))
    origins.extend(old_origins[end:])
    return Carried(lines, origins, head, len(old) - end)


def _weight(line: bytes) -> int:
    return len(line) - line.count(b" ") - line.count(b"\t") - line.count(b"\r")


def carry(old: list[bytes], old_origins: Sequence[T], new: list[bytes], fresh: T) -> list[T]:
    """The origins of ``new``'s lines, given ``old``'s lines and their origins."""
    if old == new:
        return list(old_origins)
    head = common_head(old, new)
    tail = common_tail(old, new, head)
    a, b = old[head : len(old) - tail], new[head : len(new) - tail]
    mid: list[T] = [fresh] * len(b)
    removed: list[int] = []  # indexes into a of lines no longer where they were
    added: list[int] = []  # indexes into b of lines that are new where they are
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                mid[j1 + k] = old_origins[head + i1 + k]
        else:
            removed.extend(range(i1, i2))
            added.extend(range(j1, j2))
    if removed and added:
        _carry_moves(a, b, removed, added, old_origins, head, mid)
    out = list(old_origins[:head])
    out.extend(mid)
    out.extend(old_origins[len(old) - tail :])
    return out


def _carry_moves(a: list[bytes], b: list[bytes], removed: list[int], added: list[int],
                 old_origins: Sequence[T], head: int, mid: list[T]) -> None:
    """Runs of added lines equal to runs of removed lines take the removed lines' origins."""
    where: dict[bytes, list[int]] = {}
    for i in removed:
        where.setdefault(a[i], []).append(i)
    free = set(removed)
    is_added = set(added)
    k = 0
    while k < len(added):
        j = added[k]
        best: tuple[int, int] = (0, 0)  # (length, start in a)
        for i in where.get(b[j], ()):
            if i not in free:
                continue
            n = 0
            while (j + n in is_added and i + n in free and i + n < len(a) and j + n < len(b)
                   and a[i + n] == b[j + n]):
                n += 1
            if n > best[0]:
                best = (n, i)
        n, i = best
        if n and sum(_weight(b[j + m]) for m in range(n)) >= MOVE_MIN_CHARS:
            for m in range(n):
                mid[j + m] = old_origins[head + i + m]
                free.discard(i + m)
            k += n
        else:
            k += 1
