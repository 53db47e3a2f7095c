"""Where each followable source writes: the folders a live follower watches.

A source is followed live when its registry entry (``registry.Source``) has a
``watch`` function: given the workspace's :class:`Context`, it names the
folders in which this workspace's session files are created and grow, as
:class:`WatchRoot` (they need not exist yet — ``~/.claude/projects/<slug>`` is
made by Claude Code's first session here). The follower watches them, reads a
file that changed there if ``locate`` listed it, and runs ``locate`` again when
a file it does not know appears. So a new source plugs in by registering
``watch=`` beside its ``locate`` and ``parser``; nothing else changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from .base import Context
from .claude_code import encode_project_dir


@dataclass(frozen=True, slots=True)
class WatchRoot:
    """A folder to watch; ``recursive`` for sources that file sessions by date.

    ``pattern`` (a file-name glob) says which of its files may be sessions, so a
    change to another file there (aider's history sits among the workspace's own
    files) wakes nothing.
    """

    path: Path
    recursive: bool = False
    pattern: str = "*"

    def holds(self, path: Path) -> bool:
        """Whether a change to ``path`` can concern this root."""
        if path == self.path:
            return True  # the root itself: it appeared (files may be in it already)
        if path.parent != self.path and not (self.recursive and self.path in path.parents):
            return False
        return fnmatchcase(path.name, self.pattern) or (self.recursive and path.is_dir())


def claude_code_roots(ctx: Context) -> list[WatchRoot]:
    # subagents/ transcripts sit one level down: <session>/subagents/agent-*.jsonl
    return [WatchRoot(ctx.claude_dir / "projects" / encode_project_dir(str(ctx.workspace)),
                      recursive=True, pattern="*.jsonl")]


def codex_roots(ctx: Context) -> list[WatchRoot]:
    return [WatchRoot(ctx.codex_dir / "sessions", recursive=True,  # sessions/YYYY/MM/DD/
                      pattern="rollout-*.jsonl")]


def aider_roots(ctx: Context) -> list[WatchRoot]:
    """aider writes its history into the workspace itself."""
    return [WatchRoot(ctx.workspace, pattern=".aider.chat.history.md")]
