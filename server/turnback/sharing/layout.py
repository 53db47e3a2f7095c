"""Where history lives in a git remote (``docs/FORMAT.md``, "Shared history"): one ref per
machine, ``refs/turnback/<machine>``, so any number of machines push at once without racing
on a shared branch, and normal clones and branch lists never see it.

Layout 2 (written since): each push is a commit whose tree holds

    manifest.json            what the push holds (below), with the layout version
    sessions/<id>.jsonl      one session: its header line, then one line per event

and whose parents are the machine's previous push and the tip of its checkpoint chain: one
commit per checkpoint, its tree the workspace at the root, its parent the checkpoint pushed
before it, its message the checkpoint's record. Successive checkpoints hold the same paths,
so git's have/want negotiation (and its path-based sparse walk) finds what a fetcher already
has: a pull after 100 turns transfers about what ``git fetch`` of the same commits does.

Layout 1 (read only): one commit per push holding, beside the manifest and sessions,
``checkpoints/<id>/`` — each checkpoint at a path of its own, which defeated that walk.
"""

from __future__ import annotations

import getpass
import json
import re
import secrets
import socket
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import InvalidInput
from ..events import is_id
from ..fs.jsonl import loads

LAYOUT_VERSION = 2
REF_PREFIX = "refs/turnback/"
MANIFEST = b"manifest.json"
SESSIONS = b"sessions"
CHECKPOINTS = b"checkpoints"
# Bounds a pulled history cannot make a reader exceed.
MAX_MANIFEST = 16 * 1024 * 1024
MAX_SESSION = 256 * 1024 * 1024  # one session's JSONL
MAX_CHECKPOINTS = 100_000  # in one machine's manifest or checkpoint chain
MAX_COMMIT = 1024 * 1024  # one checkpoint commit (its record is in the message)
CHECKPOINT_SUBJECT = "turnback checkpoint "
_MACHINE = re.compile(r"[a-z0-9][a-z0-9-]{0,40}-[0-9a-f]{8}")
_HOST_CHARS = re.compile(r"[^a-z0-9-]+")
_SHA = re.compile(r"[0-9a-f]{40}")


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


def _sorted_json(obj: dict[str, Any]) -> bytes:
    """orjson's bytes, keys sorted. A string holding a lone surrogate (a file name that is not
    UTF-8: a checkpoint's skipped path, a title) is written ``\\udcXX`` as the store writes
    its lines, where orjson refuses it (every push of such a store failed)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def checkpoint_message(record: dict[str, Any]) -> bytes:
    """A checkpoint commit's message: a subject git shows, then the record (without tree)."""
    label = " ".join(str(record.get("label", "")).split())[:72]
    return (f"{CHECKPOINT_SUBJECT}{record['id']}: {label}\n\n".encode("utf-8", "replace")
            + _sorted_json(record) + b"\n")


def parse_checkpoint_message(message: bytes, where: str) -> dict[str, Any]:
    """The record in a checkpoint commit's message (checked by the caller, field by field)."""
    _subject, sep, body = message.partition(b"\n\n")
    try:
        record = loads(body) if sep else None
    except orjson.JSONDecodeError:
        record = None
    if not isinstance(record, dict) or not is_id(record.get("id")):
        raise InvalidInput(f"{where}: a checkpoint commit's message holds no record")
    return record


@dataclass(slots=True)
class Manifest:
    machine: str
    user: str
    host: str
    sessions: dict[str, dict[str, Any]]  # id -> {title, agent, started, events}
    checkpoints: list[dict[str, Any]]  # layout 1: checkpoint records, without tree
    layout: int = LAYOUT_VERSION
    chain: str | None = None  # layout 2: the checkpoint chain's tip (a parent of the push)
    chained: int = 0  # layout 2: checkpoints on the chain

    def to_bytes(self) -> bytes:
        return _sorted_json({
            "layout": LAYOUT_VERSION, "machine": self.machine, "user": self.user,
            "host": self.host, "sessions": self.sessions, "chain": self.chain,
            "checkpoints": self.chained})

    @classmethod
    def parse(cls, data: bytes, where: str) -> Manifest:
        """A manifest read from a remote: every field checked before anything uses it."""
        def bad(why: str) -> InvalidInput:
            return InvalidInput(f"{where}: manifest.json {why}; nothing of it was pulled")

        try:
            obj = loads(data)  # as the store reads its lines: \\udcXX too
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
        if layout >= 2:
            chain = obj.get("chain")
            if not (chain is None or (isinstance(chain, str) and _SHA.fullmatch(chain))):
                raise bad("names a checkpoint chain that is not a commit id")
            if not isinstance(cps, int) or not 0 <= cps <= MAX_CHECKPOINTS:
                raise bad("has a checkpoint count that is not a number")
            return cls(str(machine), str(texts["user"]), str(texts["host"]), sessions, [],
                       layout, chain, cps)
        if not isinstance(cps, list) or len(cps) > MAX_CHECKPOINTS or not all(
                isinstance(c, dict) and is_id(c.get("id")) for c in cps):
            raise bad("has a checkpoint list that is not [{id, ...}]")
        return cls(str(machine), str(texts["user"]), str(texts["host"]), sessions, cps, layout)
