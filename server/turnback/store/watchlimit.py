"""The kernel's limit on file watches, as a watching server met it: what it says, and the
note it leaves in the store so that ``turnback status`` (another process) can say it too.

A server that runs out of inotify watches (``ENOSPC``) or instances (``EMFILE``) misses no
change: the folders it could not watch are walked by every checkpoint instead. That is
slower, and fixable by the person (a sysctl), so it is said once, with the numbers, in the
server's log, in its ``turnback/status`` answer (the editor's status bar) and through
``watch-limit.json`` in the store, which the CLI reads. The note is a hint, not data: it is
removed when the server stops or is no longer short, and a reader checks that the process
that wrote it still runs. It is input like any file in the store: only its numbers are
used, bounded, and the message is always made here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import StoreDamaged
from ..fs import instore
from ..fs.atomic import atomic_write
from ..fs.reading import open_regular

NOTE = "watch-limit.json"
WATCHES = "/proc/sys/fs/inotify/max_user_watches"
INSTANCES = "/proc/sys/fs/inotify/max_user_instances"
_MAX_NOTE = 4096
_MAX_COUNT = 1 << 40


def read_limit(path: str) -> int | None:
    """A kernel limit from ``/proc`` (None where there is none, as off Linux)."""
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def suggest(allowed: int, missing: int) -> int:
    """A value to raise the limit to: room for the folders not watched, twice over (other
    tools share the same per-user budget), as a round power of two."""
    need = max(allowed, 1) + 2 * max(missing, 1)
    n = 1
    while n < need:
        n *= 2
    return n


@dataclass(frozen=True, slots=True)
class WatchLimit:
    """The watcher is short of watches (``kind="watches"``) or of an inotify instance
    (``kind="instances"``): ``watched`` folders are watched, ``missing`` are not (walked by
    each checkpoint), ``allowed`` is the kernel's limit (None: unknown)."""

    kind: str
    watched: int
    missing: int
    allowed: int | None
    pid: int = 0

    @property
    def setting(self) -> str:
        return "fs.inotify.max_user_watches" if self.kind == "watches" \
            else "fs.inotify.max_user_instances"

    @property
    def raise_to(self) -> int | None:
        if self.allowed is None:
            return None
        return suggest(self.allowed, self.missing if self.kind == "watches" else 1)

    @property
    def message(self) -> str:
        to = self.raise_to
        fix = (f"Raise {self.setting} to {to:,} (sudo sysctl -w {self.setting}={to})"
               if to is not None else f"Raise {self.setting} (sysctl)")
        if self.kind == "watches":
            allowed = f"{self.allowed:,}" if self.allowed is not None else "the"
            return (f"Turnback watches {self.watched:,} of {allowed} allowed folders; "
                    f"checkpoints now scan the rest ({self.missing:,} folders). {fix}.")
        allowed = f" (all {self.allowed:,} in use)" if self.allowed is not None else ""
        return (f"Turnback could not get an inotify instance{allowed}; checkpoints now scan "
                f"the whole workspace. {fix}.")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "watched": self.watched, "missing": self.missing,
                "allowed": self.allowed, "raiseTo": self.raise_to, "message": self.message}


def write_note(store_root: Path, limit: WatchLimit | None) -> None:
    """Leave (or, with None, remove) the note for other processes. Best effort: the store
    may not exist yet, and a hint is not worth failing anything for."""
    path = store_root / NOTE
    try:
        if limit is None:
            instore.unlink(path)  # through no link swapped in
        elif store_root.is_dir():
            atomic_write(path, orjson.dumps({
                "kind": limit.kind, "watched": limit.watched, "missing": limit.missing,
                "allowed": limit.allowed, "pid": os.getpid()}), fsync=False)
    except OSError:
        pass


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_COUNT:
        return value
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, not ours to signal
    return True


def read_note(store_root: Path) -> WatchLimit | None:
    """The note of a running server, or None (none, stale, or not a note we wrote)."""
    try:
        with os.fdopen(open_regular(store_root / NOTE), "rb") as f:  # no link, no FIFO
            raw = f.read(_MAX_NOTE + 1)
    except (OSError, StoreDamaged):
        return None
    if len(raw) > _MAX_NOTE:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("kind") not in ("watches", "instances"):
        return None
    watched, missing, pid = _count(data.get("watched")), _count(data.get("missing")), \
        _count(data.get("pid"))
    allowed = _count(data.get("allowed"))
    if watched is None or missing is None or not pid or not _alive(pid):
        return None
    return WatchLimit(str(data["kind"]), watched, missing, allowed, pid)
