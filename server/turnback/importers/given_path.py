"""A source's named PATH: the file itself, or the matching files of a folder.

Every source's ``locate`` takes the PATH a person gave (``turnback import SOURCE
PATH``) the same way; sources that cannot look anywhere by themselves refuse to
run without one, saying what to name.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from .base import Context
from .inputs import find


def file_or_folder(ctx: Context, path: Path, *pattern: str) -> list[Path]:
    """``path`` itself, or the files below the folder ``path`` that match ``pattern``
    (:func:`inputs.find`: links and odd files passed over, listed in ``ctx.refused``)."""
    return find(path, *pattern, refused=ctx.refused) if path.is_dir() else [path]


def required(source: str, path: Path | None, what: str) -> Path:
    """``path``, or the refusal of a source that has no place of its own to look."""
    if path is None:
        raise InvalidInput(f"source '{source}' needs a PATH: {what}")
    return path
