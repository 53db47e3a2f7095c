"""Store settings: where the store lives, what to ignore, fsync and retention.

Kept in ``<store>/config.json``; values passed by a caller (CLI flags, the
editor's settings) override the file for that process only.
"""

from __future__ import annotations

import os
from dataclasses import asdict, field, fields
from pathlib import Path
from typing import Any

import orjson

from ..errors import InvalidInput, StoreDamaged
from ..fs.atomic import atomic_write
from ..fs.namefold import NameRules
from ..fs.paths import expand_home
from ..fs.reading import read_regular
from ..record import record

# 3: the object log (objects/packlog.py), trees written binary (trees.py), the rewind journal
# kept, emptied, between rewinds (rewind/oplog.py); 2: file modes carry every permission bit;
# reads 1 and 2
FORMAT_VERSION = 3
STORE_DIRNAME = ".turnback"
MAX_CONFIG = 1 << 20  # config.json is a few hundred bytes; a larger one is no config of ours
DEFAULT_SIZE_CAP = 50 * 1024 * 1024  # files larger than this are skipped (and reported)


@record
class StoreConfig:
    """Settings of one store. Unknown keys in config.json are kept and ignored."""

    size_cap_bytes: int = DEFAULT_SIZE_CAP
    ignores: list[str] = field(default_factory=list)  # extra gitignore-style patterns
    fsync: str = "commit"  # "always" | "commit" (checkpoint and rewind) | "never"
    auto_checkpoint: bool = True
    keep_last: int | None = None  # retention: keep at least the newest N checkpoints
    keep_days: float | None = None  # retention: keep checkpoints newer than D days
    quota_bytes: int | None = None  # drop oldest automatic checkpoints above this
    compression_level: int = 3
    # a fresh CLI finding no server starts a background one for the workspace (cli/background.py)
    background: bool = True
    # how the workspace's file system compares names, probed once per device (facade.py,
    # fs/namefold.py): {"device": st_dev, "caseInsensitive": bool, "normalizesUnicode": bool}
    filesystem: dict[str, Any] | None = None

    def validate(self) -> StoreConfig:
        if (isinstance(self.size_cap_bytes, bool) or not isinstance(self.size_cap_bytes, int)
                or self.size_cap_bytes <= 0):
            raise InvalidInput("config 'size_cap_bytes' must be a positive integer")
        if self.fsync not in ("always", "commit", "never"):
            raise InvalidInput("config 'fsync' must be one of always, commit, never")
        if not isinstance(self.auto_checkpoint, bool):
            raise InvalidInput("config 'auto_checkpoint' must be true or false")
        if not isinstance(self.background, bool):
            raise InvalidInput("config 'background' must be true or false")
        level = self.compression_level
        if isinstance(level, bool) or not isinstance(level, int) or not -(1 << 17) <= level <= 22:
            raise InvalidInput("config 'compression_level' must be an integer from -131072 to 22 "
                               "(zstd's levels)")
        if not isinstance(self.ignores, list) or not all(isinstance(p, str) for p in self.ignores):
            raise InvalidInput("config 'ignores' must be a list of strings")
        for name in ("keep_last", "quota_bytes"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise InvalidInput(f"config {name!r} must be a non-negative integer or null")
        if self.keep_days is not None and (
            not isinstance(self.keep_days, (int, float)) or self.keep_days < 0
        ):
            raise InvalidInput("config 'keep_days' must be a non-negative number or null")
        fsys = self.filesystem
        if fsys is not None and not (
                isinstance(fsys, dict) and isinstance(fsys.get("device"), int)
                and not isinstance(fsys.get("device"), bool)
                and isinstance(fsys.get("caseInsensitive"), bool)
                and isinstance(fsys.get("normalizesUnicode"), bool)):
            raise InvalidInput("config 'filesystem' must be null or {\"device\": integer, "
                               "\"caseInsensitive\": bool, \"normalizesUnicode\": bool} "
                               "(delete it: Turnback probes the file system again)")
        return self

    def name_rules(self, device: int) -> NameRules | None:
        """How names compare on the workspace's file system, if probed on this device."""
        fsys = self.filesystem
        if fsys is None or fsys["device"] != device:
            return None
        return NameRules(fsys["caseInsensitive"], fsys["normalizesUnicode"])

    def merged(self, overrides: dict[str, Any]) -> StoreConfig:
        names = {f.name for f in fields(self)}
        data = asdict(self)
        for key, value in overrides.items():
            if key not in names:
                raise InvalidInput(f"unknown setting {key!r}; known: {', '.join(sorted(names))}")
            data[key] = value
        return StoreConfig(**data).validate()

    @property
    def fsync_commits(self) -> bool:
        return self.fsync in ("always", "commit")

    @property
    def fsync_appends(self) -> bool:
        return self.fsync == "always"


def default_store_dir(workspace: Path) -> Path:
    env = os.environ.get("TURNBACK_STORE")
    return expand_home(env).resolve() if env else workspace / STORE_DIRNAME


def load_config(store_dir: Path) -> tuple[StoreConfig, int]:
    """Read config.json; return the config and the store's format version."""
    path = store_dir / "config.json"
    try:
        raw = orjson.loads(read_regular(path, limit=MAX_CONFIG))
    except FileNotFoundError:
        return StoreConfig(), FORMAT_VERSION
    except orjson.JSONDecodeError as exc:
        raise StoreDamaged(f"{path} is not valid JSON ({exc}); fix or delete it") from exc
    if not isinstance(raw, dict):
        raise StoreDamaged(f"{path} must hold a JSON object")
    version = raw.pop("formatVersion", FORMAT_VERSION)
    # bool is an int subclass in Python: `true` is not a version number.
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise StoreDamaged(
            f"{path}: formatVersion {version!r} is not a version number; "
            f"set it to {FORMAT_VERSION} (the version this Turnback writes)"
        )
    if version > FORMAT_VERSION:
        raise StoreDamaged(
            f"store {store_dir} has format version {version!r}; this Turnback reads up to "
            f"{FORMAT_VERSION}: upgrade Turnback"
        )
    known = {f.name for f in fields(StoreConfig)}
    try:
        cfg = StoreConfig(**{k: v for k, v in raw.items() if k in known}).validate()
    except InvalidInput as exc:
        raise StoreDamaged(f"{path}: {exc.message}") from exc
    return cfg, version


def save_config(store_dir: Path, config: StoreConfig) -> None:
    data = {"formatVersion": FORMAT_VERSION, **asdict(config)}
    atomic_write(store_dir / "config.json", orjson.dumps(data, option=orjson.OPT_INDENT_2))
