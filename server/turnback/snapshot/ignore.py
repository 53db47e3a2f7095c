"""Which workspace paths a checkpoint leaves out.

Always: every ``.git`` (also of nested repositories, which are otherwise
ordinary folders), the store itself and any other ``.turnback`` folder, and the name
probe's file (not a folder) in the workspace's root (``fs/namefold.is_probe``), and a
rewind's temporary file anywhere (``fs/rewindnames.is_marked``: its name down to its mark).
Then gitignore rules with git's precedence — ``.gitignore`` and
``.turnbackignore`` in any folder, deeper files first, the last matching
line of a file winning; then the repository's ``info/exclude`` and the
user's ``core.excludesFile`` (gitexclude.py) — then the configured extras.
An excluded folder is not entered, as in git.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import blake3

from ..fs import rewindnames
from ..fs.namefold import is_probe
from ..fs.paths import is_protected_name
from . import gitexclude
from .prescan import IGNORE_FILES as IGNORE_FILES

if TYPE_CHECKING:
    import pathspec

# .git of any repository, and any Turnback store folder (the store in use may live
# elsewhere; an old or nested one is store data, not workspace files)
ALWAYS = frozenset({".git", ".turnback"})
# IGNORE_FILES (the rule files read) is defined beside the forked checks that look for them


def _gitignore(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """The rules of ``lines``; a line git would not accept either (a trailing backslash, a
    reversed range like ``[z-a]``) matches nothing, as in git, instead of failing the scan."""
    import pathspec  # only once a path must be matched: a scan that trusts its cache never does

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        pass
    good = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, re.error):
            continue
        good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good)


class _Spec:
    """One folder's ignore files. Without negations, all patterns are folded into one
    regular expression (one match per path instead of one per pattern). Compiled on the
    first match."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.ready = False
        self.fast = False
        self.rx: re.Pattern[str] | None = None

    def _compile(self) -> None:
        self.spec = spec = _gitignore(self.lines)
        pats = [p for p in spec.patterns if getattr(p, "include", None) is not None]
        self.fast = all(p.include for p in pats) and all(
            getattr(p, "regex", None) is not None for p in pats)
        if self.fast and pats:
            # group names repeat across patterns; they are not needed for a yes/no match
            parts = [re.sub(r"\(\?P<[^>]+>", "(?:", p.regex.pattern) for p in pats
                     if p.regex is not None]
            self.rx = re.compile("|".join(f"(?:{x})" for x in parts))
        self.ready = True

    def check(self, sub: str) -> bool | None:
        """True: ignored, False: re-included, None: no rule says."""
        if not self.ready:
            self._compile()
        if self.fast:
            return True if self.rx is not None and self.rx.match(sub) else None
        res = self.spec.check_file(sub)
        return None if res.include is None else bool(res.include)


# ``IgnoreRules.in_dir_again``'s answers kept (about 0.2 KB each): the paths of a few
# hundred incremental checkpoints' changed files and their folders
JUDGED_MAX = 4096


class IgnoreRules:
    def __init__(self, workspace: Path, store_dir: Path, extra: list[str]) -> None:
        self.workspace = workspace
        store_rel: str | None = None
        try:
            store_rel = store_dir.resolve().relative_to(workspace.resolve()).as_posix()
        except ValueError:
            pass
        self.store_rel = store_rel
        self._extra_lines = list(extra)
        self._extra: pathspec.GitIgnoreSpec | None = None
        self._specs: dict[str, _Spec | None] = {}
        self._chains: dict[str, list[tuple[int, _Spec]]] = {}
        self._sigs: dict[str, str] = {}
        self._sig_chains: dict[str, tuple[str, ...]] = {}
        # a chain's signature by the chain itself: folders at one depth under the same
        # ignore files share it, so a walk joins and hashes each distinct chain once
        self._chain_sigs: dict[tuple[str, ...], str] = {}
        self._extra_sig = blake3.blake3("\n".join(extra).encode()).hexdigest()[:16]
        # info/exclude, then core.excludesFile: read on first use, again after ``forget``
        self._git: list[tuple[str, _Spec]] | None = None
        self._git_sig = ""
        # ``in_dir_again``'s answers by (path, is a folder): a function of the cached rules
        # above alone, dropped with them
        self._judged: dict[tuple[str, bool], bool] = {}

    def _git_specs(self) -> list[tuple[str, _Spec]]:
        """Git's other ignore files, each with the workspace's path in the repository
        (their patterns are relative to the repository's root)."""
        if self._git is None:
            got = gitexclude.load(self.workspace)
            self._git = [(got.prefix, _Spec(lines))
                         for lines in (got.info_lines, got.global_lines) if lines]
            self._git_sig = blake3.blake3(
                got.key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return self._git

    def _spec_for(self, dir_rel: str) -> _Spec | None:
        """The combined ignore files of one folder (cached; call ``forget`` when they change)."""
        if dir_rel in self._specs:
            return self._specs[dir_rel]
        lines: list[str] = []
        base = self.workspace / dir_rel if dir_rel else self.workspace
        for fname in IGNORE_FILES:
            # as git (2.32+), an ignore file that is a symlink is not read; nor is a FIFO
            # or a device (it would hang or fill the walk)
            text = gitexclude.read_text(base / fname, follow=False)
            if text is None:
                continue
            lines.extend(text.splitlines())
        spec = _Spec(lines) if lines else None
        self._specs[dir_rel] = spec
        self._sigs[dir_rel] = (
            blake3.blake3("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()[:16]
            if lines else "-")
        return spec

    def none_in(self, dir_rel: str) -> None:
        """The caller listed ``dir_rel`` and saw no ignore file: skip trying to open them."""
        if dir_rel not in self._specs:
            self._specs[dir_rel] = None
            self._sigs[dir_rel] = "-"

    def _sig_chain(self, dir_rel: str) -> tuple[str, ...]:
        """The signatures of the ignore files from the workspace down to ``dir_rel``."""
        got = self._sig_chains.get(dir_rel)
        if got is None:
            if dir_rel:
                head = self._sig_chain(dir_rel.rpartition("/")[0])
            else:
                self._git_specs()
                head = (self._extra_sig, self.store_rel or "", self._git_sig)
            self._spec_for(dir_rel)
            got = self._sig_chains[dir_rel] = (*head, self._sigs[dir_rel])
        return got

    def chain_sig(self, dir_rel: str) -> str:
        """A signature of every ignore rule in force in ``dir_rel`` (changes when any does)."""
        sigs = self._sig_chain(dir_rel)  # the parent's, plus this folder's
        got = self._chain_sigs.get(sigs)
        if got is None:
            # a value of the chain alone, never stale; ``forget`` bounds the memory
            got = self._chain_sigs[sigs] = ":".join(sigs) if len(sigs) < 6 else blake3.blake3(
                ":".join(sigs).encode("utf-8", "surrogateescape")).hexdigest()[:24]
        return got

    def forget(self) -> None:
        """Drop cached ignore files (they may have changed on disk)."""
        self._specs.clear()
        self._chains.clear()
        self._sigs.clear()
        self._sig_chains.clear()
        self._chain_sigs.clear()
        self._git = None
        self._judged.clear()

    def forget_below(self, dir_rel: str) -> None:
        """Drop the cached ignore files of ``dir_rel`` and every folder below it: a folder
        read again whole (new, or no watcher could watch it) may hold changed ones."""
        if not dir_rel:
            self.forget()
            return
        below = dir_rel + "/"
        for cache in (self._specs, self._sigs, self._sig_chains, self._chains):
            for key in [k for k in cache if k == dir_rel or k.startswith(below)]:
                del cache[key]
        # the entries inside it were judged by the rules dropped (itself, by its parent's)
        for judged in [k for k in self._judged if k[0].startswith(below)]:
            del self._judged[judged]

    def chain(self, dir_rel: str) -> list[tuple[int, _Spec]]:
        """The ignore files that apply inside ``dir_rel``, deepest first, with the length of
        the prefix to strip from a path to make it relative to each one's folder."""
        got = self._chains.get(dir_rel)
        if got is None:
            parts = dir_rel.split("/") if dir_rel else []
            got = []
            for depth in range(len(parts), -1, -1):
                d = "/".join(parts[:depth])
                spec = self._spec_for(d)
                if spec is not None:
                    got.append((len(d) + 1 if d else 0, spec))
            self._chains[dir_rel] = got
        return got

    def in_dir(self, dir_rel: str, rel: str, name: str, is_dir: bool) -> bool:
        """``is_ignored`` for an entry ``name`` of folder ``dir_rel`` (the scanner's hot path)."""
        if name in ALWAYS or is_protected_name(name):
            return True  # a .git or store folder in any spelling (fs/paths.py)
        if not dir_rel and not is_dir and is_probe(name):
            return True  # the name probe's file in the workspace's root, live or a killed
            # probe's leftover (fs/namefold.py): not the user's, never in a checkpoint; a
            # folder by that name is the user's (a probe makes none): its tree was hidden
            # from every checkpoint (redteam23)
        if name[:1] == "." and not is_dir and rewindnames.is_marked(name):
            return True  # a rewind's temporary name, live or left (a crash before the
            # recovery, a folder renamed past its reach): taken, a rewind to that checkpoint
            # made it again; a look-alike without the mark, or a folder, is the user's. The
            # first character first: str.startswith parses its arguments by a format, ~900
            # instructions a name on 3.11 (bench/RESULTS.md, trust24)
        if self.store_rel is not None and rel == self.store_rel:
            return True
        sub = rel + "/" if is_dir else rel
        for strip, spec in self.chain(dir_rel):
            res = spec.check(sub[strip:])
            if res is not None:
                return res
        for prefix, spec in self._git if self._git is not None else self._git_specs():
            res = spec.check(prefix + sub)
            if res is not None:
                return res
        if self._extra_lines:
            if self._extra is None:
                self._extra = _gitignore(self._extra_lines)
            r = self._extra.check_file(sub)
            if r.include is not None:
                return bool(r.include)
        return False

    def in_dir_again(self, dir_rel: str, rel: str, name: str, is_dir: bool) -> bool:
        """``in_dir``, remembered until the rules it read are dropped (``forget``,
        ``forget_below``): an incremental scan judges the folders on the paths to the
        changed files again at every checkpoint (~15 K instructions a name through the
        rules' patterns, most of an at-once checkpoint's 26; bench/RESULTS.md, branch
        ``atonce34``). At most ``JUDGED_MAX`` kept: a walk's names go through ``in_dir``."""
        key = (rel, is_dir)
        got = self._judged.get(key)
        if got is None:
            got = self.in_dir(dir_rel, rel, name, is_dir)
            if len(self._judged) >= JUDGED_MAX:
                self._judged.clear()
            self._judged[key] = got
        return got

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (posix, relative to the workspace) is left out.

        Only this path's own name is judged against each folder's rules; callers
        walk top-down and never enter an ignored folder, as git does.
        """
        dir_rel, _, name = rel.rpartition("/")
        if self.store_rel is not None and rel.startswith(self.store_rel + "/"):
            return True
        return self.in_dir(dir_rel, rel, name, is_dir)

    def is_ignored_path(self, rel: str, is_dir: bool) -> bool:
        """Like ``is_ignored`` but also true when any parent folder is ignored."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if self.is_ignored("/".join(parts[:i]), True):
                return True
        return self.is_ignored(rel, is_dir)
