"""What the store found and set aside, told to the user once for each cause.

A log the store refuses (frames no writer makes, or longer than any log is: a planted one,
or damage) and a repair of ``checkpoints.jsonl`` (damaged lines; records put back from the
object logs) were said only by ``fsck`` or a listing: a user never learned that the store
had set something aside. A rewind's journal the recovery emptied (its rewind touched no
file: ``store/dropped_rewind.py``) is such a cause too. ``untold`` gives the causes present
now that a channel (the CLI's stderr, the language server's ``window/showMessage``) has
not told yet, and notes
them told in ``cache/notices-told``: once for each cause, not for each command. The
server's ``turnback/status`` lists every cause present (``current``), told or not.

The file is input: a forged line keeps one warning untold (``fsck`` still says it all); it
is read only when there is a cause, at most ``MAX_BYTES``, and keeps ``MAX_LINES``.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreDamaged, TurnbackError
from ..fs.atomic import atomic_write
from ..fs.reading import open_regular, read_regular
from ..objects.packlog import READ_MAX, log_names, refused_at
from . import dropped_rewind
from .state import StoreState

MAX_BYTES = 16 << 10
MAX_LINES = 128
# refused logs named one by one up to this many; more are one notice (a cause of its own:
# their set). 200 planted logs were 200 window/showMessage at one status, and more causes
# than MAX_LINES were told again at every command (redteam19)
LOGS_NAMED = 4
CHANNELS = ("cli", "server")


@dataclass(frozen=True, slots=True)
class Notice:
    # "log" (a refused object log), "index" (checkpoints.jsonl repaired) or "rewind" (a
    # rewind's journal emptied at an open: store/dropped_rewind.py)
    kind: str
    key: str  # the cause: told once while it stays the same (no space in it)
    message: str  # what was found, what was done, what to do

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "key": self.key, "message": self.message}


def _refused_here(folder: str, name: str) -> bool:
    """Whether the log is longer than any log is, or its first frame holds no object (a
    log of such frames: one read). A refused frame after real ones is found by the open's
    walk (``StoreState.refused_logs``)."""
    try:
        fd = open_regular(os.path.join(folder, name))
    except (OSError, StoreDamaged):
        return False
    try:
        size = os.fstat(fd).st_size
        return size > READ_MAX or refused_at(fd, 0, size)
    except OSError:
        return False
    finally:
        os.close(fd)


def _folded(folder: Path, logs: list[Notice]) -> Notice:
    """One notice for many refused logs, keyed by their set: told again only when it
    changes (a log planted or removed)."""
    keys = "\n".join(sorted(n.key for n in logs)).encode("utf-8", "replace")
    return Notice("log", f"logs:{len(logs)}:{zlib.crc32(keys):08x}", (
        f"{len(logs)} object logs in {folder} hold frames no Turnback writes (planted, or "
        "damaged): the store reads nothing of them from there on. Run 'turnback fsck' to "
        "list them and what is wrong, then move them out of the store if you did not put "
        "them there"))


def current(store: StoreState, probe: bool = True) -> list[Notice]:
    """The causes present now: a refused log still there, a repair this process made.
    ``probe``: each log's first frame read too, for a log planted since the open, whose
    walk found the others (``StoreState.refused_logs``): 165-212 us at 19 logs, for a
    server's status; a CLI command, just opened, passes False."""
    out: list[Notice] = []
    if not probe and not store.set_aside():
        return out
    folder = store.objects.root / "log"
    names = log_names(folder) if probe else sorted(store.refused_logs)
    for name in names:
        if name in store.refused_logs or (probe and _refused_here(str(folder), name)):
            try:
                ino = os.lstat(folder / name).st_ino
            except OSError:
                continue
            out.append(Notice("log", f"log:{name}:{ino}", (
                f"the object log {folder / name} holds frames no Turnback writes (planted, or "
                "damaged): the store reads nothing of it from there on. Run 'turnback fsck' "
                "to see what is wrong, then move the log out of the store if you did not "
                "put it there")))
    if len(out) > LOGS_NAMED:
        out = [_folded(folder, out)]
    put_back, damaged = store.index.repaired, store.index_damaged
    if put_back or damaged:
        try:
            ino = os.lstat(store.index.path).st_ino
        except OSError:
            ino = 0
        done = (f"{put_back} checkpoint record(s) were put back from the object logs that "
                "hold them" if put_back else "the object logs held no record it lost")
        out.append(Notice("index", f"index:{ino}:{max(put_back, damaged)}", (
            f"{store.index.path} was damaged (lines unreadable or lost): {done}. Run "
            "'turnback fsck' to list the damaged lines")))
    if probe or store.rewind_dropped:
        dropped = dropped_rewind.read(store.root)
        if dropped is not None:
            out.append(Notice("rewind", *dropped))
    return out


def _told(path: Path) -> list[str]:
    try:
        text = read_regular(path, limit=MAX_BYTES)
    except (OSError, StoreDamaged):
        return []
    return [line for line in text.decode("ascii", "replace").splitlines() if line][-MAX_LINES:]


def untold(store: StoreState, channel: str, found: list[Notice] | None = None) -> list[Notice]:
    """The causes present (``found``, else ``current``) that ``channel`` has not told yet,
    now noted told (a store that cannot be written tells them again next time: better
    twice than never; the server keeps its own once in memory too)."""
    if channel not in CHANNELS:
        raise ValueError(f"unknown notice channel {channel!r}: one of {', '.join(CHANNELS)}")
    if found is None:
        found = current(store, probe=channel != "cli")
    if not found:
        return []
    path = store.root / "cache" / "notices-told"
    told = _told(path)
    fresh = [n for n in found if f"{channel} {n.key}" not in told]
    if fresh:
        lines = [*told, *(f"{channel} {n.key}" for n in fresh)][-MAX_LINES:]
        try:
            atomic_write(path, "".join(f"{line}\n" for line in lines).encode("ascii",
                                                                          "replace"),
                         fsync=False)
        except (OSError, TurnbackError):
            pass
    return fresh
