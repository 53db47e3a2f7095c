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
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from ..errors import InvalidInput, NotFound, TurnbackError
from ..fs.programs import find_program

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


class GitStalled(GitFailed):
    """A git command talking to a remote got nothing for ``stall_seconds()``: stopped."""


STALL_ENV = "TURNBACK_GIT_STALL"
STALL_S = 120.0
# git's progress lines (with --progress), left out of what a failure quotes
_PROGRESS = re.compile(r"^(remote: )?(Enumerating|Counting|Compressing|Receiving|Resolving|"
                       r"Writing|Unpacking|Total|Delta compression) ")


def stall_seconds() -> float:
    """How long a command talking to a remote may go without a byte from git: git has no
    timeout of its own for git:// or ssh remotes, and one that accepts the connection and
    then sends nothing would hold ``turnback pull`` (over the server: the folder's writes,
    every checkpoint included) for ever. Progress (``--progress``) counts as a byte."""
    raw = os.environ.get(STALL_ENV)
    if not raw:
        return STALL_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise InvalidInput(f"{STALL_ENV}={raw!r} is not a number of seconds above 0 "
                           f"(the default is {STALL_S:g})")
    return value


def git_binary() -> str:
    found = find_program("git")  # never the workspace's own git (fs/programs.py)
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
    remote: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command and return it; a failure raises ``GitFailed`` with git's words.

    ``remote``: the command talks to a remote; it is stopped (``GitStalled``) when git
    says nothing for ``stall_seconds()``."""
    if what == "git" and args:  # named by its verb and repository: "git failed" said neither
        what = f"git {args[0]}" + (f" (in {git_dir})" if git_dir is not None else "")
    cmd = [git_binary(), *_FIXED]
    if git_dir is not None:
        cmd += ["--git-dir", str(git_dir)]
    cmd += list(args)
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        if remote and input is None:
            proc = _run_watched(cmd, cwd, full_env, stall_seconds(), what)
        else:
            proc = subprocess.run(cmd, cwd=cwd, input=input, capture_output=True, env=full_env,
                                  stdin=None if input is not None else subprocess.DEVNULL)
    except OSError as exc:
        raise GitFailed(f"{what}: could not run git: {exc}") from exc
    if check and proc.returncode != 0:
        text = proc.stderr.decode("utf-8", "replace").replace("\r", "\n")
        said = "\n".join(line for line in text.split("\n")
                         if line.strip() and not _PROGRESS.match(line))
        raise GitFailed(f"{what} failed: {said or f'exit {proc.returncode}'}")
    return proc


def _run_watched(cmd: list[str], cwd: Path | None, env: Mapping[str, str], stall: float,
                 what: str) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run`` with output captured, stopped when neither stream gets a byte
    for ``stall`` seconds. (Not in its own session: ssh must still reach the terminal to
    ask for a passphrase; git's children end once git is gone.)"""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    chunks: tuple[list[bytes], list[bytes]] = ([], [])
    heard = threading.Event()  # set at every chunk and at each stream's end
    ended: list[int] = []
    lock = threading.Lock()

    def pump(stream: IO[bytes], into: list[bytes]) -> None:
        # the thread owns its stream and closes it at its end: after a stop, a child of
        # git (ssh, a remote helper) may hold it open a while longer (daemon threads)
        try:
            with stream:
                while chunk := os.read(stream.fileno(), 1 << 16):
                    into.append(chunk)
                    heard.set()
        finally:
            with lock:
                ended.append(1)
            heard.set()

    for stream, into in ((proc.stdout, chunks[0]), (proc.stderr, chunks[1])):
        threading.Thread(target=pump, args=(stream, into), daemon=True,
                         name="turnback-git-output").start()
    try:
        while True:
            heard.clear()  # before looking: a stream ending meanwhile sets it again
            if len(ended) == 2:
                break
            if not heard.wait(stall):
                raise GitStalled(f"{what}: the remote sent nothing for {stall:g} s, so git "
                                 f"was stopped; check the remote's address and the network, "
                                 f"or set {STALL_ENV} to wait longer")
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(cmd, code, b"".join(chunks[0]), b"".join(chunks[1]))


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
