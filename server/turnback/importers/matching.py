"""Sessions of every workspace in one folder: telling which are this workspace's.

Codex, Copilot CLI, Continue, OpenCode and the Cline family keep the sessions
of all the user's projects side by side (``~/.codex/sessions/…``,
``~/.continue/sessions/``, a shared ``tasks/`` folder); each session names its
folder somewhere inside (a first line's ``cwd``, a ``workspaceDirectory``, a
task's "Current Working Directory"). A source describes that as a
:class:`Matching`: where the candidates are, and whether one of them belongs
to the workspace. ``locate`` is then every candidate that belongs; and the live
follower, told that one file changed, asks ``belongs`` of that one input only —
so a change in another project's session costs one small read, not a search of
the whole folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .base import Context


@dataclass(frozen=True, slots=True)
class Matching:
    """``candidates``: every input that may be a session of some workspace (read
    through ``inputs.find``); ``belongs``: whether one is a session of
    ``ctx.workspace`` (it reads at most that input)."""

    candidates: Callable[[Context], list[Path]]
    belongs: Callable[[Context, Path], bool]

    def locate(self, ctx: Context) -> list[Path]:
        return [p for p in self.candidates(ctx) if self.belongs(ctx, p)]


def same_dir(a: object, b: Path) -> bool:
    """Whether the text ``a`` names the folder ``b`` (both resolved; not text: no)."""
    if not isinstance(a, str) or not a:
        return False
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, ValueError):
        return False
