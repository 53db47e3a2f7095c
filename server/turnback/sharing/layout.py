"""Where history lives in a git remote (``docs/FORMAT.md``, "Shared history"): one ref per
machine, ``refs/turnback/<machine>``, so any number of machines push at once without racing
on a shared branch, and normal clones and branch lists never see it. Each push is a commit
on that machine's chain; its tree:

    manifest.json            what the commit holds (below), with the layout version
    sessions/<id>.jsonl      one session: its header line, then one line per event
    checkpoints/<id>/        one checkpoint: the workspace as a real git tree
"""

from __future__ import annotations

import getpass
import re
import secrets
import socket
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import InvalidInput
from ..events import is_id

LAYOUT_VERSION = 1
REF_PREFIX = "refs/turnback/"
MANIFEST = b"manifest.json"
SESSIONS = b"sessions"
CHECKPOINTS = b"checkpoints"
# Bounds a pulled history cannot make a reader exceed.
MAX_MANIFEST = 16 * 1024 * 1024
MAX_SESSION = 256 * 1024 * 1024  # one session's JSONL
MAX_CHECKPOINTS = 100_000  # in one machine's manifest
_MACHINE = re.compile(r"[a-z0-9][a-z0-9-]{0,40}-[0-9a-f]{8}")
_HOST_CHARS = re.compile(r"[^a-z0-9-]+")


def is_machine(value: object) -> bool:
    return isinstance(value, str) and _MACHINE.fullmatch(value) is not None


def new_machine_id() -> str:
    """``<host>-<8 hex>``: readable in ``git ls-remote``, unique per store."""
    host = _HOST_CHARS.sub("-", socket.gethostname().lower()).strip("-")[:40] or "machine"
    return f"{host}-{secrets.token_hex(4)}"


def who() -> tuple[str, str]:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return user, socket.gethostname()


def pulled_session_id(session_id: str, machine: str) -> str:
    """The local id of a pulled session: ``<id>@<machine>`` (read-only in the store)."""
    sid = f"{session_id}@{machine}"
    if not is_id(sid):
        raise InvalidInput(f"session id {session_id[:80]!r} of machine {machine!r} is too long "
                           "to keep beside its machine's name")
    return sid


@dataclass(slots=True)
class Manifest:
    machine: str
    user: str
    host: str
    sessions: dict[str, dict[str, Any]]  # id -> {title, agent, started, events}
    checkpoints: list[dict[str, Any]]  # checkpoint records (docs/FORMAT.md), without tree

    def to_bytes(self) -> bytes:
        return orjson.dumps({
            "layout": LAYOUT_VERSION, "machine": self.machine, "user": self.user,
            "host": self.host, "sessions": self.sessions,
            "checkpoints": self.checkpoints}, option=orjson.OPT_SORT_KEYS)

    @classmethod
    def parse(cls, data: bytes, where: str) -> Manifest:
        """A manifest read from a remote: every field checked before anything uses it."""
        def bad(why: str) -> InvalidInput:
            return InvalidInput(f"{where}: manifest.json {why}; nothing of it was pulled")

        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise bad("is not JSON") from None
        if not isinstance(obj, dict):
            raise bad("is not a JSON object")
        layout = obj.get("layout")
        if not isinstance(layout, int) or layout < 1:
            raise bad("has no layout version")
        if layout > LAYOUT_VERSION:
            raise bad(f"has layout {layout}, newer than this Turnback's {LAYOUT_VERSION}: "
                      "upgrade Turnback")
        machine = obj.get("machine")
        if not is_machine(machine):
            raise bad(f"names machine {str(machine)[:80]!r}, not a machine id")
        texts = {k: obj.get(k) for k in ("user", "host")}
        if not all(isinstance(v, str) and len(v) <= 256 for v in texts.values()):
            raise bad("has a user or host that is not a short string")
        sessions = obj.get("sessions")
        if not isinstance(sessions, dict) or not all(
                is_id(k) and isinstance(v, dict) for k, v in sessions.items()):
            raise bad("has a session list that is not {id: {...}}")
        cps = obj.get("checkpoints")
        if not isinstance(cps, list) or len(cps) > MAX_CHECKPOINTS or not all(
                isinstance(c, dict) and is_id(c.get("id")) for c in cps):
            raise bad("has a checkpoint list that is not [{id, ...}]")
        return cls(str(machine), str(texts["user"]), str(texts["host"]), sessions, cps)
