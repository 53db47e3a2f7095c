"""Git's ignore files other than ``.gitignore``: the repository's ``info/exclude`` and
the user's ``core.excludesFile``.

Git reads them after every ``.gitignore`` (lower precedence), with patterns relative to
the repository's root. They are found here without running git (it may be missing, and
starting it costs milliseconds on every CLI call): the repository is the nearest
folder upward from the workspace holding a ``.git`` folder or ``gitdir:`` file, and
``core.excludesFile`` is read from the repository's config, then ``~/.gitconfig``, then
``$XDG_CONFIG_HOME/git/config`` (or ``$GIT_CONFIG_GLOBAL`` alone when set), defaulting
to ``$XDG_CONFIG_HOME/git/ignore``. Not followed: ``include``/``includeIf`` and the
system config. Every file is only input: unreadable ones count as empty.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import StoreDamaged
from ..fs.reading import open_regular
from ..record import record

MAX_READ = 4 * 1024 * 1024  # an ignore or config file larger than this is cut there


# ``init=False``: it writes its own ``__init__``, compiled into the ``.pyc``, not by
# ``dataclass`` at every start (``record``'s docstring)
@record(frozen=True, init=False)
class GitExcludes:
    """The lines of both files, and where the workspace sits in the repository."""

    prefix: str  # the workspace relative to the repository root, "" or ending in "/"
    info_lines: list[str]  # info/exclude (empty when there is no repository)
    global_lines: list[str]  # core.excludesFile
    key: str  # what they were read from and what they held, for cache signatures

    def __init__(self, prefix: str, info_lines: list[str], global_lines: list[str],
                 key: str) -> None:
        object.__setattr__(self, "prefix", prefix)  # frozen: as dataclass's own __init__
        object.__setattr__(self, "info_lines", info_lines)
        object.__setattr__(self, "global_lines", global_lines)
        object.__setattr__(self, "key", key)


def read_text(path: Path | str, *, follow: bool = True) -> str | None:
    """A regular file's text, cut at ``MAX_READ`` (None: missing, unreadable, or no regular
    file — a FIFO or ``/dev/zero`` named in a config must not hang or fill the process).
    ``follow=False`` refuses a symlink too, as git does for in-tree ignore files."""
    try:
        fd = open_regular(path, follow=follow)
    except (OSError, ValueError, StoreDamaged):
        return None
    try:
        want = min(os.fstat(fd).st_size, MAX_READ)
        chunks = []
        while want > 0:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        return b"".join(chunks).decode("utf-8", "surrogateescape")
    except OSError:
        return None
    finally:
        os.close(fd)


def find_repository(workspace: Path) -> tuple[Path, Path] | None:
    """(work tree root, common git folder) of the repository holding ``workspace``.

    A ``.git`` file (a linked worktree, a submodule) names its git folder on a
    ``gitdir:`` line; a worktree's ``commondir`` file then names the folder holding
    ``info/`` and ``config``, as git resolves them.
    """
    for d in (workspace, *workspace.parents):
        dotgit = d / ".git"
        try:
            st = os.stat(dotgit)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            gitdir = dotgit
        else:
            text = read_text(dotgit) or ""
            first = text.splitlines()[0] if text else ""
            if not first.startswith("gitdir:"):
                continue  # not a repository marker git would accept either
            gitdir = d / first[len("gitdir:"):].strip()
        common = gitdir
        rel = (read_text(gitdir / "commondir") or "").strip()
        if rel:
            common = gitdir / rel
        return d, common
    return None


def _parse_value(text: str, pos: int) -> tuple[str | None, int]:
    """A config value starting at ``pos`` (after ``=``), as git's ``parse_value``:
    quotes, escapes, continuation lines, comments; inner blanks kept, outer dropped."""
    out: list[str] = []
    quote = False
    space = 0
    n = len(text)
    while True:
        if pos >= n:
            return (None if quote else "".join(out)), pos
        c = text[pos]
        pos += 1
        if c == "\n":
            return (None if quote else "".join(out)), pos
        if not quote and c in ";#":
            end = text.find("\n", pos)
            return "".join(out), (n if end < 0 else end + 1)
        if not quote and c in " \t\r":
            if out:
                space += 1
            continue
        if space:
            out.append(" " * space)
            space = 0
        if c == "\\":
            if pos >= n:
                return None, pos
            c = text[pos]
            pos += 1
            if c == "\n":
                continue  # a continuation line
            esc = {"t": "\t", "b": "\b", "n": "\n", "\\": "\\", '"': '"'}.get(c)
            if esc is None:
                return None, pos  # git refuses the file; this key counts as unset
            out.append(esc)
            continue
        if c == '"':
            quote = not quote
            continue
        out.append(c)


def config_excludes_file(text: str) -> str | None:
    """The last ``core.excludesFile`` value in git config ``text`` (None: not set).

    Section and key names are case-insensitive; ``[core "x"]`` is another section.
    """
    found: str | None = None
    if "excludesfile" not in text.lower():
        return None  # most configs: no need to parse (continuation lines split no key name)
    in_core = False
    pos, n = 0, len(text)
    while pos < n:
        c = text[pos]
        if c in " \t\r\n":
            pos += 1
            continue
        if c in "#;":
            end = text.find("\n", pos)
            pos = n if end < 0 else end + 1
            continue
        if c == "[":
            end = text.find("]", pos)
            if end < 0:
                break
            header = text[pos + 1:end].strip()
            in_core = header.lower() == "core"  # a subsection or "core.x" is not [core]
            pos = end + 1  # a key may follow on the same line
            continue
        start = pos
        while pos < n and (text[pos].isalnum() or text[pos] == "-"):
            pos += 1
        key = text[start:pos]
        while pos < n and text[pos] in " \t":
            pos += 1
        if not key or pos >= n or text[pos] != "=":
            end = text.find("\n", pos)  # a bare key (a boolean) or a line git would refuse
            pos = n if end < 0 else end + 1
            continue
        value, pos = _parse_value(text, pos + 1)
        if in_core and key.lower() == "excludesfile" and value is not None:
            found = value
    return found


def _home() -> Path | None:
    home = os.environ.get("HOME")
    return Path(home) if home else None


def _xdg_git(name: str) -> Path | None:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "git" / name
    home = _home()
    return home / ".config" / "git" / name if home is not None else None


def _expand(value: str, base: Path) -> Path:
    """A config path as git reads it: ``~/`` is $HOME, ``~user/`` that user's home,
    and a relative path is taken from the work tree's root (where git runs)."""
    if value.startswith("~"):
        user, _, rest = value[1:].partition("/")
        if not user:
            home = _home()
            if home is not None:
                return home / rest
        else:
            try:
                return Path(os.path.expanduser("~" + user)) / rest
            except (KeyError, RuntimeError):
                pass
    return base / value


def excludes_file(common: Path | None, base: Path) -> Path | None:
    """The file ``core.excludesFile`` names (the repository's config first), else git's
    default; None when no home is known."""
    sources: list[Path | None] = [common / "config" if common is not None else None]
    given = os.environ.get("GIT_CONFIG_GLOBAL")
    if given:
        sources.append(Path(given))
    else:
        home = _home()
        sources += [home / ".gitconfig" if home is not None else None, _xdg_git("config")]
    for src in sources:
        if src is None:
            continue
        text = read_text(src)
        value = config_excludes_file(text) if text else None
        if value:
            return _expand(value, base)
    return _xdg_git("ignore")


def load(workspace: Path) -> GitExcludes:
    """The git ignore files that apply to ``workspace`` (a workspace in no repository
    still gets the user's ``core.excludesFile``, relative to the workspace, as
    ``.gitignore`` files are honoured there too)."""
    repo = find_repository(workspace)
    if repo is None:
        top, common = workspace, None
        info = ""
    else:
        top, common = repo
        info = read_text(common / "info" / "exclude") or ""
    prefix = ""
    if top != workspace:
        prefix = workspace.relative_to(top).as_posix() + "/"
    path = excludes_file(common, top)
    glob = (read_text(path) or "") if path is not None else ""
    key = "\0".join([prefix, str(common or ""), info, str(path or ""), glob])
    return GitExcludes(prefix, info.splitlines(), glob.splitlines(), key)
