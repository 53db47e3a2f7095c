"""What the importers would find for a workspace, without importing: the first run's
"Import Agent Sessions Found Here (N)".

Only sources that look in a usual place (Claude Code's and Codex's folders, aider's and
ralph's files in the workspace) are asked; a source that needs a PATH finds nothing on
its own. Locating reads at most each candidate's first line (its ``cwd``), so this is
cheap enough for a view that opens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import registry
from .base import Context


@dataclass(frozen=True, slots=True)
class Found:
    source: str
    summary: str
    files: int  # session files found (a Claude Code subagent's file counts with its session)

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "summary": self.summary, "files": self.files}


def found_here(workspace: Path, home: Path | None = None,
               env: Mapping[str, str] | None = None) -> list[Found]:
    """Each source with sessions for ``workspace`` in its usual place (none: not listed)."""
    ctx = Context(workspace=workspace, home=home if home is not None else Path.home(),
                  env=dict(os.environ if env is None else env))
    names = [s.name for s in registry.SOURCES.values() if s.default]
    out = []
    for name, files in registry.located(ctx, names):  # the same look as registry.discover
        n = sum(1 for f in files if f.parent.name != "subagents")
        if n:
            out.append(Found(name, registry.SOURCES[name].summary, n))
    return out
