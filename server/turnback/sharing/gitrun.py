"""Running the user's own ``git``: the transport of ``turnback push``/``pull``.

Why the ``git`` binary and not dulwich or pygit2: a push must reach the remote the way
the user's code does — their credential helper, SSH config and agent, proxies, ``insteadOf``
rewrites, HTTP settings — and only ``git`` itself reads all of those. dulwich speaks the
protocols but not the user's credential helpers and SSH set-up in full; pygit2 needs
libgit2 with its own SSH/HTTPS stack and callbacks for credentials. Every Turnback user of
this feature already has ``git``: the remote is their code's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import InvalidInput, NotFound, TurnbackError

# the machinery's own commits: no hooks, no signing, objects checked as they arrive.
# pack.useSparse=false: git's sparse walk (the default since 2.27) compares trees by path,
# and every checkpoint is a new path (checkpoints/<id>/): with it, a push after 100 turns
# sent every file of the workspace again (28.4 MB instead of 3.2 MB, bench/RESULTS.md)
_FIXED = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false",
          "-c", "transfer.fsckObjects=true", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
          "-c", "pack.useSparse=false")


class GitFailed(TurnbackError):
    """A git command failed; the message holds what git said."""

    code = -32603


def git_binary() -> str:
    found = shutil.which("git")
    if found is None:
        raise NotFound("git is not installed (or not on PATH); sharing history runs through "
                       "your own git: install it and try again")
    return found


def run(
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    what: str = "git",
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command and return it; a failure raises ``GitFailed`` with git's words."""
    cmd = [git_binary(), *_FIXED]
    if git_dir is not None:
        cmd += ["--git-dir", str(git_dir)]
    cmd += list(args)
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        proc = subprocess.run(cmd, cwd=cwd, input=input, capture_output=True, env=full_env,
                              stdin=None if input is not None else subprocess.DEVNULL)
    except OSError as exc:
        raise GitFailed(f"{what}: could not run git: {exc}") from exc
    if check and proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
        raise GitFailed(f"{what} failed: {said}")
    return proc


def out(args: Sequence[str], *, git_dir: Path | None = None, cwd: Path | None = None,
        what: str = "git") -> str:
    return run(args, git_dir=git_dir, cwd=cwd, what=what).stdout.decode("utf-8", "replace").strip()


def workspace_remote_url(workspace: Path, name: str) -> str | None:
    """The URL of remote ``name`` of the workspace's git repository, or None."""
    proc = run(["remote", "get-url", "--push", "--", name], cwd=workspace, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").strip() or None


def check_remote(remote: str) -> None:
    if not remote or remote.startswith("-") or "\0" in remote or "\n" in remote:
        raise InvalidInput(f"remote {remote!r} is neither a remote name nor a git URL")
