"""What a git commit changed, line by line: the lines it added to each file, as its own
version numbers them, read through the user's ``git`` (as ``sharing/gitrun.py`` does;
this layer lies below sharing, so it asks git itself, for these few read-only commands).

Everything git prints is input: a path git had to quote (a control character, a quote)
is passed over, and a path that leaves the workspace is refused by the store's checks.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidInput, NotFound
from ..fs.programs import find_program

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
TIMEOUT_S = 60


@dataclass(slots=True)
class CommitFile:
    path: str  # workspace-relative
    added: list[int] = field(default_factory=list)  # 1-based line numbers in the commit's version


@dataclass(slots=True)
class Commit:
    sha: str
    time: str  # committer time, ISO 8601
    files: list[CommitFile]


def _git(ws: Path, *args: str) -> bytes:
    git = find_program("git")  # an absolute path: never a git in the working folder
    try:
        if git is None:
            raise FileNotFoundError("git")
        done = subprocess.run([git, "-C", str(ws), "-c", "core.quotePath=false", *args],
                              capture_output=True, timeout=TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise NotFound("git is not installed (or not on PATH): Agent Trace export reads the "
                       "commit through git") from None
    if done.returncode != 0:
        msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise NotFound(f"git {args[0]}: {msg[-1] if msg else 'failed'}")
    return done.stdout


def read_commit(ws: Path, ref: str = "HEAD") -> Commit:
    if ref.startswith("-"):
        raise InvalidInput(f"{ref!r} is not a commit (a commit cannot start with '-')")
    sha = _git(ws, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"
               ).decode().strip()
    time = _git(ws, "show", "-s", "--format=%cI", sha).decode().strip()
    prefix = _git(ws, "rev-parse", "--show-prefix").decode().strip()
    patch = _git(ws, "diff-tree", "-r", "-p", "-U0", "--no-color", "--no-ext-diff",
                 "--no-renames", "--root", "--no-commit-id", sha)
    files: list[CommitFile] = []
    current: CommitFile | None = None
    in_header = False  # between a "diff --git" line and its first hunk
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):  # (a content line starts with +, - or space)
            in_header, current = True, None
        elif line.startswith(b"@@"):
            in_header = False
        if line.startswith(b"+++ ") and in_header:
            # only in a header: an added line "++ b/x" is "+++ b/x" in the hunk, and must
            # not start a file of its own (its lines would be traced to a path it names)
            current = None
            name = line[4:]
            if name == b"/dev/null" or not name.startswith(b"b/"):
                continue  # deleted, or a quoted name
            try:
                path = name[2:].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if not path.startswith(prefix):
                continue  # outside the workspace's folder of the repository
            current = CommitFile(path[len(prefix):])
            files.append(current)
        elif current is not None and line.startswith(b"@@"):
            m = _HUNK.match(line)
            if m is not None:
                start, count = int(m.group(1)), int(m.group(2) or b"1")
                current.added.extend(range(start, start + count))
    return Commit(sha, time, [f for f in files if f.added])


def file_at(ws: Path, sha: str, path: str) -> bytes:
    """The file as the commit holds it (``path`` workspace-relative)."""
    prefix = _git(ws, "rev-parse", "--show-prefix").decode().strip()
    return _git(ws, "cat-file", "blob", f"{sha}:{prefix}{path}")


def add_note(ws: Path, sha: str, text: str, ref: str = "agent-trace") -> None:
    """Attach ``text`` to the commit as a git note under ``refs/notes/<ref>`` (replacing one
    there)."""
    _git(ws, "notes", "--ref", ref, "add", "-f", "-m", text, sha)
