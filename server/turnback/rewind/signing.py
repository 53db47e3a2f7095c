"""Journals are signed, so a store folder that came from elsewhere cannot write files.

A journal is applied when a store is opened — by any CLI verb, or by the language server
when the editor opens the folder — so a ``.turnback/journal.json`` shipped in a cloned
repository or a synced folder would otherwise write whatever its plan says (inside the
workspace: new files, world-writable if it likes, where ``git status`` may not show them).
Turnback signs each journal it writes with a key of the user's (BLAKE3 in keyed mode),
kept outside every workspace: ``$XDG_STATE_HOME/turnback/journal.key`` (default
``~/.local/state/…``), 0600 in a 0700 folder, made on the first rewind. Recovery applies
only a journal whose signature matches; any other is named and left alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import blake3

from ..errors import TurnbackError
from ..fs.jsonl import dumps
from ..fs.osflags import O_BINARY, O_NOFOLLOW
from ..fs.paths import expand_home
from ..fs.reading import open_regular

KEY_BYTES = 32
FIELD = "signature"


def key_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(expand_home("~/.local/state"))
    return Path(state) / "turnback" / "journal.key"


def _key(create: bool) -> bytes | None:
    path = key_path()
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        if not create:
            return None
        return _make_key(path)
    except (OSError, TurnbackError):  # a link, a FIFO: no key (so no signature matches)
        return None
    try:
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data if len(data) == KEY_BYTES else None


def _make_key(path: Path) -> bytes | None:
    key = os.urandom(KEY_BYTES)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY, 0o600)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # never replaces a key another process made meanwhile
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError:
        return None  # no place for a key: journals go unsigned, and recovery says so
    return _key(create=False)


def _mac(key: bytes, record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != FIELD}
    return blake3.blake3(dumps(body), key=key).hexdigest()


def sign(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its signature (unsigned when the user's key cannot be made)."""
    key = _key(create=True)
    if key is None:
        return record
    return {**record, FIELD: _mac(key, record)}


def check(record: dict[str, Any]) -> str | None:
    """None when ``record`` was signed with this user's key; else why it is not trusted."""
    given = record.get(FIELD)
    if not isinstance(given, str):
        return "it is not signed (Turnback signs every journal it writes)"
    key = _key(create=False)
    if key is None:
        return f"the key that would verify it ({key_path()}) is missing or unreadable"
    import hmac

    if not hmac.compare_digest(given, _mac(key, record)):
        return ("its signature does not match: it was not written by Turnback for this user "
                "on this machine (a store folder from elsewhere?)")
    return None
