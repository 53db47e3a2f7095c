"""Deterministic edits of a benchmark workspace, like an agent's turn.

Each edit of a text file replaces one line in the middle and inserts two lines
carrying a round counter: the size changes (no tool can miss it through a
same-size, same-second race) and a diff has something to show.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

SKIP_DIRS = {".git", ".turnback", "node_modules"}
TEXT_SUFFIXES = {
    ".py", ".ts", ".js", ".tsx", ".go", ".rs", ".c", ".h", ".md", ".json", ".yaml", ".css", ".html",
}  # fmt: skip


def text_files(workspace: Path) -> list[str]:
    """Relative paths of the regular text files the generator made, sorted."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(workspace):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            full = os.path.join(dirpath, name)
            if os.path.splitext(name)[1] in TEXT_SUFFIXES and not os.path.islink(full):
                found.append(os.path.relpath(full, workspace))
    return sorted(found)


class Editor:
    """Edits ``k`` distinct text files per round, chosen by a seeded generator."""

    def __init__(self, workspace: Path, seed: int = 11) -> None:
        self.workspace = workspace
        self.files = text_files(workspace)
        if not self.files:
            raise ValueError(
                f"no text files to edit under {workspace}: generate the workspace first"
            )
        self.rng = random.Random(seed)
        self.round = 0
        self._last: list[str] = []

    def edit(self, k: int) -> dict[str, bytes]:
        """Edit ``k`` files; returns their new contents (to re-apply them later)."""
        if k > len(self.files):
            raise ValueError(
                f"cannot edit {k} files: the workspace has {len(self.files)} text files"
            )
        return self._edit(self.rng.sample(self.files, k))

    def _edit(self, chosen: list[str]) -> dict[str, bytes]:
        self.round += 1
        written: dict[str, bytes] = {}
        self._last = chosen
        for rel in chosen:
            path = self.workspace / rel
            lines = path.read_bytes().split(b"\n")
            mid = len(lines) // 2
            stamp = f"edit round {self.round} of {rel}".encode()
            lines[mid : mid + 1] = [b"# " + stamp, lines[mid] + b"  # changed", b"# end " + stamp]
            data = b"\n".join(lines)
            path.write_bytes(data)
            written[rel] = data
        return written

    def edit_again(self) -> dict[str, bytes]:
        """Edit the files the last ``edit`` edited, once more (a next turn on them)."""
        return self._edit(list(self._last))

    def apply(self, contents: dict[str, bytes]) -> None:
        """Write ``contents`` again (the same edit, after a restore undid it)."""
        for rel, data in contents.items():
            (self.workspace / rel).write_bytes(data)

    def snapshot(self, paths: list[str]) -> dict[str, bytes]:
        return {rel: (self.workspace / rel).read_bytes() for rel in paths}
