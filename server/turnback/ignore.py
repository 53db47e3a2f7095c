"""Which workspace paths a checkpoint leaves out.

Always: every ``.git`` (also of nested repositories, which are otherwise
ordinary folders) and the store itself. Then gitignore rules with git's
precedence — ``.gitignore`` and ``.turnbackignore`` in any folder, deeper files
first, the last matching line of a file winning — then the configured extras.
An excluded folder is not entered, as in git.
"""

from __future__ import annotations

from pathlib import Path

import pathspec

ALWAYS = frozenset({".git"})
IGNORE_FILES = (".gitignore", ".turnbackignore")


class IgnoreRules:
    def __init__(self, workspace: Path, store_dir: Path, extra: list[str]) -> None:
        self.workspace = workspace
        store_rel: str | None = None
        try:
            store_rel = store_dir.resolve().relative_to(workspace.resolve()).as_posix()
        except ValueError:
            pass
        self.store_rel = store_rel
        self.extra = pathspec.GitIgnoreSpec.from_lines(extra) if extra else None
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def _spec_for(self, dir_rel: str) -> pathspec.GitIgnoreSpec | None:
        """The combined ignore files of one folder (cached; call ``forget`` when they change)."""
        if dir_rel in self._specs:
            return self._specs[dir_rel]
        lines: list[str] = []
        base = self.workspace / dir_rel if dir_rel else self.workspace
        for fname in IGNORE_FILES:
            try:
                text = (base / fname).read_text(encoding="utf-8", errors="replace")
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
                continue
            lines.extend(text.splitlines())
        spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        self._specs[dir_rel] = spec
        return spec

    def forget(self) -> None:
        """Drop cached ignore files (they may have changed on disk)."""
        self._specs.clear()

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (posix, relative to the workspace) is left out.

        Only this path's own name is judged against each folder's rules; callers
        walk top-down and never enter an ignored folder, as git does.
        """
        name = rel.rsplit("/", 1)[-1]
        if name in ALWAYS:
            return True
        if self.store_rel is not None and (
            rel == self.store_rel or rel.startswith(self.store_rel + "/")
        ):
            return True
        parts = rel.split("/")
        # deepest folder first: its rules override its parents'
        for depth in range(len(parts) - 1, -1, -1):
            dir_rel = "/".join(parts[:depth])
            spec = self._spec_for(dir_rel)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            res = spec.check_file(sub)
            if res.include is not None:
                return bool(res.include)
        if self.extra is not None:
            res = self.extra.check_file(rel + ("/" if is_dir else ""))
            if res.include is not None:
                return bool(res.include)
        return False

    def is_ignored_path(self, rel: str, is_dir: bool) -> bool:
        """Like ``is_ignored`` but also true when any parent folder is ignored."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if self.is_ignored("/".join(parts[:i]), True):
                return True
        return self.is_ignored(rel, is_dir)
