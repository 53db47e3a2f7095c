"""A rewind whose journal the next open emptied, kept so that the user is told it.

Since trust37 the recovery empties a signed journal whose rewind touched no file (killed in
its journal's sync, or refused and killed before the journal's retraction): applying it
would make a rewind the user was told, or was about to be told, failed. Emptied silently,
nothing said the rewind the user asked for did not happen (redteam51). So the recovery
first writes ``cache/rewind-dropped``: the journal's op, id, target and mode, signed with
the journal's key (``rewind/signing``), and ``notices`` turns it into a notice told once
for each channel and listed by the server's status until a later rewind begins.

The file is input: read at most ``MAX_BYTES``, shown only when its signature is this
user's and its ids are ids (``check_id``), so a planted file puts no text of its own in
front of the user; anything else is ignored (nothing was applied from it either way).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import StoreDamaged, TurnbackError
from ..events import check_id
from ..fs.atomic import atomic_write
from ..fs.jsonl import dumps
from ..fs.reading import read_regular
from ..rewind import signing

NAME = "rewind-dropped"
MAX_BYTES = 4 << 10
_TS = re.compile(r"[0-9][0-9T:.+Z-]{0,39}")


def path_in(root: Path) -> Path:
    return root / "cache" / NAME


def note(root: Path, record: dict[str, Any], *, fsync: bool) -> None:
    """Keep what the journal ``record`` asked, before the recovery empties it. A failure
    to write is passed over: the journal is emptied all the same (better untold than a
    store that does not open)."""
    paths = record.get("paths")
    kept = {"op": record.get("op"), "id": record.get("id"),
            "checkpoint": record.get("checkpoint"), "mode": record.get("mode"),
            "ts": record.get("ts"),
            "paths": len(paths) if isinstance(paths, list) else 0}
    try:
        atomic_write(path_in(root), dumps(signing.sign(kept)), fsync=fsync)
    except (OSError, TurnbackError):
        pass


def clear(root: Path) -> None:
    """A later rewind begun: the one dropped is no longer news."""
    try:
        path_in(root).unlink()
    except OSError:
        pass


def read(root: Path) -> tuple[str, str] | None:
    """The notice's key and message, or None: no file, or one this user's Turnback did
    not write (unsigned, another key), or whose fields are not what it writes."""
    try:
        data = read_regular(path_in(root), limit=MAX_BYTES)
        record = json.loads(data)
    except (OSError, StoreDamaged, ValueError, RecursionError):  # 4 KiB of "[": nested
        return None
    if not isinstance(record, dict) or signing.check(record) is not None:
        return None
    try:
        op_id = check_id(record.get("id"), "id")
    except TurnbackError:
        return None
    try:
        target: str | None = check_id(record.get("checkpoint"), "checkpoint")
    except TurnbackError:
        target = None  # named as no id is: not shown
    op, mode, paths, ts = (record.get("op"), record.get("mode"), record.get("paths"),
                           record.get("ts"))
    if op not in ("rewind", "undo") or mode not in ("files", "both") \
            or not isinstance(paths, int) or isinstance(paths, bool) or paths < 0:
        return None
    when = f", asked at {ts}" if isinstance(ts, str) and _TS.fullmatch(ts) else ""
    if op == "undo":
        what, again = "an undo", "'turnback undo'"
    else:
        what = f"a rewind to checkpoint {target}" if target else "a rewind"
        again = (f"'turnback rewind {target or '<checkpoint>'}"
                 f"{' --mode both' if mode == 'both' else ''}")
        again += f" <the {paths} path(s) you named>'" if paths else "'"
    return f"rewind-dropped:{op_id}", (
        f"{what} (op {op_id}{when}) was stopped before it changed any file (its process "
        "ended, or it was refused, before its first file) and was dropped when the store "
        "was next opened: no file was changed and nothing was recorded. To make it, run "
        f"{again} again")
