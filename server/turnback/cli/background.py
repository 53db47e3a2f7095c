"""Leaving a watcher running: a fresh CLI that found no server starts one, as git's
fsmonitor daemon is started by the first ``git status`` that wants it.

A fresh process must look at every file of the workspace to know what changed (docs/
ARCHITECTURE.md, "What a fresh process must do at least"); a server watching it knows
without looking. So ``checkpoint``, ``rewind``, ``undo`` and ``status`` (and an agent's
``turnback hook``), when no server took their request, start ``turnback serve --headless``
for the workspace, detached, and do their own work as before: the next call hands off to it
(``cli/handoff.py``). The server leaves by itself after ``TURNBACK_BACKGROUND_IDLE`` seconds
(1800) with no request, when the store or the workspace goes away, or when an editor's
server takes the folder (``server/background.py``).

Nothing is started when ``TURNBACK_BACKGROUND=0`` (or ``TURNBACK_HANDOFF=0``), when the
store's ``config.json`` says ``"background": false``, where there is no AF_UNIX, before
the store exists (a command never leaves a process behind in a folder that has no store),
when the store is a link or not this user's folder, when a server already answers on the
socket, or while another background server holds the store's lock (one is starting).

``candidate`` runs before the work and imports nothing beyond ``handoff``'s few modules;
``start`` runs after it, when the store's modules are loaded anyway, and does not wait for
the child.
"""

from __future__ import annotations

import os
import stat

from ..fs import sockets
from .handoff import find_workspace, parse, store_root

ENV = "TURNBACK_BACKGROUND"
VERBS = ("checkpoint", "rewind", "undo", "status")


def candidate(argv: list[str]) -> tuple[str, str] | None:
    """(workspace, store) to start a background server for once ``argv``'s work is done,
    or None. Cheap: a few ``lstat`` and one ``connect``."""
    req = parse(argv)
    if req is None or req.verb not in VERBS:
        return None
    try:
        ws = find_workspace(req.workspace)
        return wanted(ws, store_root(ws, req.store))
    except (OSError, ValueError):
        return None


def wanted(workspace: str, root: str) -> tuple[str, str] | None:
    """(workspace, root) if a background server may be started for them, else None."""
    if (os.environ.get(ENV) == "0" or os.environ.get("TURNBACK_HANDOFF") == "0"
            or not sockets.available()):
        return None  # off, or a server nobody would hand anything to
    try:
        st = os.lstat(root)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            return None  # a link, a file, someone else's: the store's trust rules say no
        if not stat.S_ISREG(os.lstat(os.path.join(root, "config.json")).st_mode):
            return None  # no store yet
    except OSError:
        return None
    path = sockets.socket_path(root)
    if path is None or (sockets.usable_socket(path) and sockets.answers(path)):
        return None  # a server serves it (it declined this request: it will the next)
    return workspace, root


def start(found: tuple[str, str] | None, *, forced: bool = False) -> None:
    """Start the background server for ``found`` (from ``candidate``), detached; never
    raises, never waits. ``forced`` (``turnback serve --background``): whatever the
    store's ``background`` setting says."""
    if found is None:
        return
    workspace, root = found
    try:
        from pathlib import Path

        from ..store import background_lock
        from ..store.config import load_config

        if background_lock.holder(Path(root)) or not (
                forced or load_config(Path(root))[0].background):
            return
        import subprocess
        import sys

        argv = [sys.executable, "-m", "turnback.cli.main", "-C", workspace]
        if root != store_root(workspace, None):
            # a store the user named: trusted as named. The workspace's own is not passed:
            # named, its inner links would not be looked at (privacy.refuse_foreign)
            argv += ["--store", root]
        subprocess.Popen(
            [*argv, "serve", "--headless"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd="/", close_fds=True, start_new_session=True)
    except Exception:  # a hook's work is done; a watcher not started costs only speed
        return
