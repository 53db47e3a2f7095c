"""Reaching the remote: which one, pushing the machine's chain, fetching everyone's.

``REMOTE`` is a remote name of the workspace's git repository (its push URL is used) or any
git URL; without one, the history remote set with ``turnback remote --set`` or else the
workspace's ``origin``. A push updates only ``refs/turnback/<this machine>`` and never
forces: git's own push is atomic per ref (objects first, then the ref), so a push killed
half-way leaves the remote's ref where it was and the next push sends what is missing.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput
from .gitrun import GitFailed, GitStalled, check_remote, git_binary, out, run, workspace_remote_url
from .layout import REF_PREFIX, is_machine
from .repo import PULLED, ShareRepo

REMOTE_KEY = "turnback.remote"


@dataclass(slots=True)
class Remote:
    given: str  # what the user named (a remote name or a URL)
    url: str
    why: str  # "argument", "history remote" or "origin"


def resolve(workspace: Path, repo: ShareRepo, remote: str | None) -> Remote:
    why = "argument"
    if remote is None:
        remote = repo.config(REMOTE_KEY) if (repo.git_dir / "HEAD").exists() else None
        why = "history remote"
    if remote is None:
        remote, why = "origin", "origin"
    check_remote(remote)
    url = workspace_remote_url(workspace, remote)
    if url is not None:
        return Remote(remote, url, why)
    if why == "origin":
        raise InvalidInput(
            "no remote to share history with: the workspace has no git remote 'origin'; "
            "give one (turnback push URL-or-remote) or set one (turnback remote --set URL)")
    if "/" not in remote and ":" not in remote:
        raise InvalidInput(f"'{remote}' is not a remote of the workspace's git repository, "
                           "nor a URL or path")
    if ":" not in remote and Path(remote).expanduser().exists():
        return Remote(remote, str(Path(remote).expanduser().resolve()), why)
    return Remote(remote, remote, why)


def remote_refs(repo: ShareRepo, url: str) -> dict[str, str]:
    """machine -> commit of every history on the remote (``git ls-remote``)."""
    text = run(["ls-remote", "--", url, REF_PREFIX + "*"], git_dir=repo.git_dir,
               what=f"git ls-remote {url}", remote=True).stdout.decode("utf-8", "replace")
    found = {}
    for line in text.splitlines():
        sha, _, ref = line.partition("\t")
        name = ref[len(REF_PREFIX):]
        if ref.startswith(REF_PREFIX) and is_machine(name) and len(sha) == 40:
            found[name] = sha
    return found


def pack_bytes(repo: ShareRepo, commit: str, exclude: list[str]) -> tuple[int, int]:
    """(objects, bytes) of the pack a push of ``commit`` sends to a remote that has the
    commits ``exclude``: the objects ``rev-list`` finds, packed by ``git pack-objects``.
    An upper bound: push's own pack is thin (it may delta against what the remote has)."""
    args = ["rev-list", "--objects", commit, *(f"^{e}" for e in exclude)]
    listing = run(args, git_dir=repo.git_dir, what="git rev-list").stdout
    objects = sum(1 for line in listing.splitlines() if line)
    # (--thin would switch pack-objects to reading revisions, where the same exclusion sent
    # every blob of the older trees again: measured, 69 KB instead of 2.7 KB)
    proc = subprocess.Popen([git_binary(), "--git-dir", str(repo.git_dir), "pack-objects",
                             "--stdout", "--quiet"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    # pack-objects reads the whole list before it writes: no deadlock on the two pipes
    proc.stdin.write(listing)
    proc.stdin.close()
    total = 0
    while chunk := proc.stdout.read(1 << 20):
        total += len(chunk)
    proc.stdout.close()
    if proc.wait() != 0:
        raise GitFailed("git pack-objects failed while counting what a push sends")
    return objects, total


_WRITTEN = re.compile(r"Writing objects: 100% \((\d+)/\d+\), ([\d.]+) (bytes?|KiB|MiB|GiB)")
_UNITS = {"byte": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def push(repo: ShareRepo, url: str, commit: str, machine: str, exclude: list[str],
         lease: str | None = None, replace: bool = False) -> tuple[int, int | None]:
    """Push ``commit`` to the machine's ref; (objects, bytes) git said it wrote (bytes as
    git rounds them; None when it did not say). ``replace``: the ref may move to a commit
    that does not descend from it, only if the remote still has ``lease`` there (None:
    no ref there) — a forgetting push never overwrites what it has not seen."""
    ref = f"{REF_PREFIX}{machine}"
    args = ["push", "--progress", "--no-verify"]
    if replace:
        args.append(f"--force-with-lease={ref}:{lease or ''}")
    proc = run([*args, "--", url, f"{commit}:{ref}"], git_dir=repo.git_dir,
               env={"LC_ALL": "C", "LANGUAGE": ""}, what=f"git push to {url}", remote=True)
    said = proc.stderr.decode("utf-8", "replace").replace("\r", "\n")
    found = _WRITTEN.findall(said)
    if not found:  # nothing written (the remote had every object), or git said it otherwise
        objects = count_objects(repo, commit, exclude)
        return objects, 0 if objects == 0 else None
    n, size, unit = found[-1]
    return int(n), int(float(size) * _UNITS[unit])


def count_objects(repo: ShareRepo, commit: str, exclude: list[str]) -> int:
    args = ["rev-list", "--objects", "--count", commit, *(f"^{e}" for e in exclude)]
    return int(out(args, git_dir=repo.git_dir, what="git rev-list") or 0)


def delete(repo: ShareRepo, url: str, machine: str, lease: str) -> None:
    """Delete the machine's ref on the remote, if it still names ``lease``."""
    ref = f"{REF_PREFIX}{machine}"
    run(["push", "--quiet", "--no-verify", f"--force-with-lease={ref}:{lease}", "--", url,
         f":{ref}"], git_dir=repo.git_dir, what=f"git push --delete to {url}", remote=True)


def fetch(repo: ShareRepo, url: str) -> tuple[dict[str, str], dict[str, str]]:
    """Fetch every machine's history into ``refs/turnback-pulled/``.

    Returns (machine -> commit fetched, machine -> why git refused it). git checks every
    object it receives (``transfer.fsckObjects``: ``..``, ``.git`` and ``a/b`` names,
    malformed trees); when it refuses the batch, each machine is fetched alone, so one
    hostile history does not stop the others'.
    """
    # the remote's refs are listed first: only well-formed machine names are fetched
    # (one refspec each), so a crafted ref name never becomes a local ref
    refs = remote_refs(repo, url)
    for stale in set(repo.refs(PULLED)) - set(refs):
        repo.set_ref(PULLED + stale, None)
    refused: dict[str, str] = {}

    def get(machines: list[str]) -> None:
        specs = [f"+{REF_PREFIX}{m}:{PULLED}{m}" for m in machines]
        # --progress: a long transfer is heard from, so only a silent remote is stopped
        run(["fetch", "--progress", "--no-tags", "--no-write-fetch-head", "--", url, *specs],
            git_dir=repo.git_dir, what=f"git fetch from {url}", remote=True)

    if refs:
        try:
            get(sorted(refs))
        except GitStalled:
            raise  # a silent remote: asking it once per machine would only wait longer
        except GitFailed:
            for machine in sorted(refs):
                try:
                    get([machine])
                except GitFailed as exc:
                    refused[machine] = exc.message
                    repo.set_ref(PULLED + machine, None)
    fetched = {m: c for m, c in repo.refs(PULLED).items() if m not in refused}
    return fetched, refused
