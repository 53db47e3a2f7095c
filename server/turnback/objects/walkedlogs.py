"""The logs an open's walk back read whole and found no record in: skipped at later opens.

An open reads each object log back from its end until a record ``checkpoints.jsonl``
holds (``packlog.records``). A log of frames without records (a planted one: one object a
frame, which a writer's invariants allow) was walked whole at every open: 0.77 s of CPU at
32 MiB, ~7 s at ``READ_MAX`` (bench/RESULTS.md, ``logs18``). Once a walk has passed
``DEEP`` frames and read such a log to its start, its identity (device, inode, size: a
writer's append changes it; mtime and ctime are noted, not compared) is noted here with
where its last complete frame ends; a later walk that passes ``DEEP`` frames of a log
noted with the same identity stops there. A log whose end is torn was read forward whole
before its walk back could start (``packlog._backward_by_segments``): noted, its walk
starts at that frame's end.

The file is input. A forged line can only stop an open's walk of a log after ``DEEP``
frames, or start a torn log's where a complete frame ends, none starts, and the frames
chain back to the log's start or for ``DEEP`` frames (``packlog._chained``: a fake frame
inside a stored block does not, unless ``DEEP`` of them are forged in a row); what it
could hide there (records lost from ``checkpoints.jsonl``) is put back by the next merge,
gc or ``fsck``, which read every log whole and never look here. A crash that loses the
file's last lines loses those of the newest frames, which every walk reads before it
looks here.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StoreDamaged, TurnbackError
from ..fs.atomic import atomic_write
from ..fs.reading import read_regular

DEEP = 1024  # frames walked before the file is looked at: an ordinary open stops sooner
MAX_BYTES = 64 << 10  # more is not a file written here: ignored
MAX_LOGS = 256  # lines kept (logs still there only): a bounded file


# compared: device, inode, size. A writer only appends (the size changes); mtime and ctime
# are written (an older version compares them) but not compared: a ``touch`` of a planted
# log made the next open walk it whole again (1.3 s at 32 MiB, bench/RESULTS.md ``trust19``)
_SAME = 3


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class WalkedLogs:
    """The noted identities, read on first use; ``note`` and ``save`` to add one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held: dict[str, tuple[tuple[int, ...], int]] | None = None
        self._changed = False

    def _load(self) -> dict[str, tuple[tuple[int, ...], int]]:
        if self._held is None:
            self._held = {}
            try:
                text = read_regular(self.path, limit=MAX_BYTES)
            except (OSError, StoreDamaged):
                return self._held
            for line in text.splitlines():
                parts = line.split()
                try:
                    if len(parts) == 7:
                        values = tuple(int(p) for p in parts[1:])
                        self._held[parts[0].decode("ascii")] = (values[:5], values[5])
                except (UnicodeDecodeError, ValueError):
                    continue
        return self._held

    def end(self, name: str, st: os.stat_result) -> int | None:
        """Where the last complete frame of ``name`` ends, if it was walked whole, without
        a record, as it is now (None: it was not). Input: the caller checks a frame ends
        there (``packlog._newest_first`` reads the log forward if none does)."""
        held = self._load().get(name)
        if (held is None or held[0][:_SAME] != _identity(st)[:_SAME]
                or not 0 <= held[1] <= st.st_size):
            return None
        return held[1]

    def note(self, name: str, st: os.stat_result, end: int) -> None:
        self._load()[name] = (_identity(st), end)
        self._changed = True

    def save(self, present: list[str]) -> None:
        """Write the file if a log was noted, keeping the logs still ``present`` (a cache:
        not written, a later open walks those logs again)."""
        if not self._changed or self._held is None:
            return
        keep = [n for n in present if n in self._held][-MAX_LOGS:]
        data = "".join(f"{n} {' '.join(str(v) for v in self._held[n][0])} {self._held[n][1]}\n"
                       for n in keep)
        try:
            atomic_write(self.path, data.encode("ascii"), fsync=False)
        except (OSError, TurnbackError):
            pass
        self._changed = False
