"""The editor's ``turnback`` settings, as the server receives them.

They come from ``initializationOptions`` at start-up and later from
``workspace/didChangeConfiguration`` (pushed) or ``workspace/configuration``
(pulled per folder, so a multi-root workspace may set each folder apart).
Either may wrap them in ``{"turnback": {...}}``. A bad value is reported by its
setting name and the previous settings stay in force.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from ...fs.paths import expand_home, utf8_text

SECTION = "turnback"


@dataclass(frozen=True, slots=True)
class Retention:
    keep_last: int | None = None
    keep_days: float | None = None
    quota_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    """One folder's settings; ``None`` means "the store's own config decides"."""

    store_path: str | None = None  # absolute, or relative to the workspace folder
    auto_checkpoint: bool = True
    ignores: tuple[str, ...] = ()
    size_cap_bytes: int | None = None
    follow_agents: bool = True  # follow every supported agent's sessions of this folder ...
    follow_off: frozenset[str] = frozenset()  # ... except these (followAgents: {agent: false})
    retention: Retention = field(default_factory=Retention)
    watch: bool = True  # off: no file watching; every checkpoint walks the tree
    read_only: bool = False  # an untrusted workspace: nothing of the agents' is read

    def followed(self, sources: list[str]) -> list[str]:
        """Which of ``sources`` to follow in this folder."""
        if self.read_only or not self.follow_agents:
            return []
        return [s for s in sources if s not in self.follow_off]

    def store_dir(self, workspace: Path) -> Path | None:
        """Where this folder's store lives, or None for the default."""
        if not self.store_path:
            return None
        raw = self.store_path.replace("${workspaceFolder}", str(workspace))
        path = expand_home(raw)
        # normpath, not resolve: "../x" names a sibling folder even before it exists.
        return Path(os.path.normpath(path if path.is_absolute() else workspace / path))

    def store_overrides(self) -> dict[str, Any]:
        """``StoreConfig`` fields these settings override for this process."""
        out: dict[str, Any] = {"auto_checkpoint": self.auto_checkpoint}
        if self.ignores:
            out["ignores"] = list(self.ignores)
        if self.size_cap_bytes is not None:
            out["size_cap_bytes"] = self.size_cap_bytes
        r = self.retention
        if r.keep_last is not None:
            out["keep_last"] = r.keep_last
        if r.keep_days is not None:
            out["keep_days"] = r.keep_days
        if r.quota_bytes is not None:
            out["quota_bytes"] = r.quota_bytes
        return out

    def store_key(self) -> tuple[Any, ...]:
        """What, when it changes, needs the store reopened."""
        return (self.store_path, self.ignores, self.size_cap_bytes, self.retention)


KEYS = frozenset(
    {"storePath", "autoCheckpoint", "ignores", "sizeCapBytes", "followAgents", "retention", "watch",
     "readOnly"}
)


def carries_settings(raw: object) -> bool:
    """Whether a pushed settings object holds ours (VS Code may push other sections)."""
    if not isinstance(raw, dict):
        return False
    return isinstance(raw.get(SECTION), dict) or bool(KEYS & raw.keys())


def unwrap(raw: object) -> object:
    """The ``turnback`` section of a settings object, whether wrapped or not."""
    if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
        return raw[SECTION]
    return raw


def parse(raw: object, where: str) -> Settings:
    """Settings from a JSON value; ``InvalidInput`` names the bad setting."""
    raw = unwrap(raw)
    if raw is None:
        return Settings()
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: the turnback settings must be an object")

    def bad(name: str, want: str) -> InvalidInput:
        return InvalidInput(
            f"{where}: setting 'turnback.{name}' must be {want}, got {raw.get(name)!r}"
        )

    def opt_int(src: dict[str, Any], name: str, label: str) -> int | None:
        v = src.get(name)
        if v is None:
            return None
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidInput(
                f"{where}: setting 'turnback.{label}' must be a non-negative integer, got {v!r}"
            )
        return v

    def flag(name: str, default: bool) -> bool:
        v = raw.get(name)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise bad(name, "true or false")
        return v

    store_path = raw.get("storePath")
    if store_path is not None and not _name_text(store_path):
        raise bad("storePath", "a path string (no NUL, no lone surrogate)")
    ignores = raw.get("ignores")
    if ignores is None:
        ignores = []
    if not isinstance(ignores, list) or not all(_name_text(p) for p in ignores):
        raise bad("ignores", "an array of gitignore patterns (no NUL, no lone surrogate)")
    size_cap = opt_int(raw, "sizeCapBytes", "sizeCapBytes")
    if size_cap == 0:
        raise bad("sizeCapBytes", "a positive integer")

    ret_raw = raw.get("retention")
    if ret_raw is None:
        ret_raw = {}
    if not isinstance(ret_raw, dict):
        raise bad("retention", "an object {keepLast, keepDays, quotaBytes}")
    keep_days = ret_raw.get("keepDays")
    if keep_days is not None and (
        isinstance(keep_days, bool) or not isinstance(keep_days, (int, float)) or keep_days < 0
    ):
        raise InvalidInput(
            f"{where}: setting 'turnback.retention.keepDays' must be a non-negative number, "
            f"got {keep_days!r}"
        )
    retention = Retention(
        keep_last=opt_int(ret_raw, "keepLast", "retention.keepLast"),
        keep_days=float(keep_days) if keep_days is not None else None,
        quota_bytes=opt_int(ret_raw, "quotaBytes", "retention.quotaBytes"),
    )
    follow = raw.get("followAgents")
    follow_off: frozenset[str] = frozenset()
    if isinstance(follow, dict):
        # {"codex": false}: every agent but those; the old boolean still works
        if not all(isinstance(k, str) and isinstance(v, bool) for k, v in follow.items()):
            raise bad("followAgents", 'true, false, or an object of agents to booleans '
                      '(e.g. {"codex": false})')
        follow_off = frozenset(k for k, v in follow.items() if not v)
        follow = True
    elif follow is not None and not isinstance(follow, bool):
        raise bad("followAgents", 'true, false, or an object of agents to booleans '
                  '(e.g. {"codex": false})')
    return Settings(
        store_path=store_path or None,
        auto_checkpoint=flag("autoCheckpoint", True),
        ignores=tuple(ignores),
        size_cap_bytes=size_cap,
        follow_agents=True if follow is None else follow,
        follow_off=follow_off,
        retention=retention,
        watch=flag("watch", True),
        read_only=flag("readOnly", False),
    )


def _name_text(value: object) -> bool:
    """Whether ``value`` is a string a file name or a pattern for one can hold: JSON's
    ``\\ud800`` (a lone surrogate) or a NUL in ``storePath`` or ``ignores`` failed every
    checkpoint of the folder with an internal error while the setting stood (redteam21)."""
    return isinstance(value, str) and "\x00" not in value and utf8_text(value)
