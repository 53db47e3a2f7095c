"""The background server: the language server's core for one workspace, with no editor.

What ``turnback serve --headless`` runs, started detached by a fresh CLI that found no
server (``cli/background.py``), like git's fsmonitor daemon: the folder's store, its
watcher and its CLI hand-off socket (``<store>/run/cli.sock``), no LSP client, no agent
follower. It walks the workspace once when its socket is up (``_walk_once``); the next
``turnback checkpoint`` hands off to it and reads only what the watcher saw change.

It is a process that lives on, so it ends by itself: after ``TURNBACK_BACKGROUND_IDLE``
seconds (1800; at most a day) with no hand-off request; when the workspace, the store or its
socket goes away (checked every ``CHECK_S``); when asked to leave over the socket (an
editor's server taking the folder, ``turnback serve --stop``); on SIGTERM. At most one runs
per store (the lock of ``store/background_lock.py``, then the socket's bind: a live socket
is never taken from another server). It opens the store as every client does
(``Store.open``'s trust checks: no linked or foreign store) and creates none. Its log is
``run/background.log`` in the store's private folder, at most ``LOG_LIMIT`` bytes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import stat
import time
from pathlib import Path

from ..fs import instore
from ..fs.heldfolder import HeldFolder
from ..fs.osflags import O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK
from ..store import background_lock
from ..store.config import default_store_dir
from .workspace.settings import Settings

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    import asyncio

    from ..store.facade import Store
    from .core import TurnbackServer
    from .jobs.handoff import HandoffListener
    from .workspace.folders import Folder

log = logging.getLogger("turnback.server")

IDLE_ENV = "TURNBACK_BACKGROUND_IDLE"
DEFAULT_IDLE_S = 1800.0
CHECK_S = 1.0  # how often it looks whether its workspace, store and socket are still there
LOG_NAME = "background.log"
LOG_LIMIT = 1 << 20


MAX_IDLE_S = 86400.0  # a day: ``inf`` or 1e300 in the user's environment kept it for ever


def idle_limit() -> float:
    """The seconds without a request after which the server leaves: ``IDLE_ENV`` if it is a
    number of seconds above 0 and at most ``MAX_IDLE_S``; past it, ``MAX_IDLE_S``; not a
    number, NaN, 0 or below, ``DEFAULT_IDLE_S``. A value not taken as it is is said in the
    log with the one used (called once a server)."""
    raw = os.environ.get(IDLE_ENV, "")
    if not raw:
        return DEFAULT_IDLE_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if value > MAX_IDLE_S:
        used, why = MAX_IDLE_S, f"more than {MAX_IDLE_S:g} s (a day)"
    elif value > 0:
        return value
    else:  # NaN compares false both ways: here too
        used, why = DEFAULT_IDLE_S, "not a number of seconds above 0"
    log.warning("%s=%r is %s: this background server leaves after %g s without a request "
                "instead", IDLE_ENV, raw[:40], why, used)
    return used


def main(workspace: Path, store_dir: str | None) -> int:
    """Serve ``workspace``'s store until a reason to leave; 0, or 1 when it could not start
    (said on stderr: the CLI that started it sends that to /dev/null, ``serve --headless``
    run by hand shows it)."""
    ws = workspace.resolve()
    settings = Settings(store_path=store_dir, follow_agents=False)
    root = (settings.store_dir(ws) or default_store_dir(ws))
    if not (root / "config.json").is_file():
        print(f"turnback: no store at {root}; nothing to serve", flush=True)
        return 1
    try:
        lock = background_lock.take(root)
    except OSError as exc:
        print(f"turnback: {exc}", flush=True)
        return 1
    if lock is None:
        print(f"turnback: a background server already serves {root}", flush=True)
        return 0
    # the lock is taken before the server's modules are imported (~0.4 s of CPU): a hook
    # that comes meanwhile finds it held and starts no second server
    import asyncio

    try:
        _log_to_store(root)
        return asyncio.run(_serve(ws, settings))
    except Exception as exc:  # a damaged store, say: in the log, where someone may look
        log.exception("%s: the background server failed: %s", ws, getattr(exc, "message", exc))
        return 1
    finally:
        os.close(lock)


def _log_to_store(root: Path) -> None:
    """The log file, if it is a regular file of this user with one name; else stderr (a
    planted link, FIFO or hard link: no log rather than a stray write, a wait for a reader
    while holding the lock, or another file truncated at ``LOG_LIMIT``)."""
    from . import logs

    try:
        fd = instore.open_file(root / "run" / LOG_NAME, os.O_WRONLY | os.O_APPEND
                               | os.O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
    except OSError:
        logs.setup_stderr()
        return
    try:
        st = os.fstat(fd)
        fit = stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and (
            not hasattr(os, "geteuid") or st.st_uid == os.geteuid())
    except OSError:
        fit = False
    if not fit:
        os.close(fd)
        logs.setup_stderr()
        return
    logs.setup_file(fd, LOG_LIMIT)


async def _serve(ws: Path, settings: Settings) -> int:
    import asyncio

    from .core import TurnbackServer
    from .jobs.handoff import HandoffListener
    from .jobs.work import run_blocking
    from .workspace.folders import path_to_uri
    from .workspace.notify import Unheard

    loop = asyncio.get_running_loop()
    ls = TurnbackServer()
    ls.notifier = Unheard(ls, loop)
    folder = ls.folders.add(path_to_uri(ws), settings)
    leave = asyncio.Event()
    if hasattr(signal, "SIGTERM"):
        loop.add_signal_handler(signal.SIGTERM, leave.set)
    listener = HandoffListener(ls, folder, loop)
    held: dict[str, HeldFolder] | None = None
    try:
        store = await run_blocking(ls.pools.writes, lambda: folder.open_store(create=False))
        if store is None:
            log.info("%s: no store; leaving", ws)
            return 1
        held = {"the workspace": HeldFolder(ws), "the store": HeldFolder(Path(store.root))}
        ls.restart_watcher(folder)
        folder.opened.set()
        listener.on_leave = leave.set
        if not await listener.start(Path(store.root), take_over=False):
            return 0  # logged: another server serves it, or no socket can be made
        folder.handoff = listener
        idle = idle_limit()
        log.info("%s: background server (pid %d) watching; leaves after %g s idle",
                 ws, os.getpid(), idle)
        await _walk_once(ls, folder)
        why = await _until_leaving(folder, listener, leave, held, idle)
        log.info("%s: leaving: %s", ws, why)
        return 0
    finally:
        listener.stop()
        async with folder.write_lock:  # a request under way finishes first
            # closing a store saves its caches: into a store made again, or into another
            # one put in its place (whose next checkpoint would name objects it lacks)
            if held is not None and _gone(folder, None, held) is None:
                await run_blocking(ls.pools.writes, ls.close_all)
            else:
                folder.stop_watcher()
        for folder_held in (held or {}).values():
            folder_held.close()
        ls.pools.shutdown()


async def _walk_once(ls: TurnbackServer, folder: Folder) -> None:
    """Walk the workspace now, as the next checkpoint would (``Store.prepare(None)``), once
    the watcher is up: the walk that makes the watcher's set trusted is then this one, not
    the first checkpoint a hook asks for (which would wait for it: 634-758 ms against a
    steady 30-52 ms on SPEC's workspace at load 17, bench/RESULTS.md). A request that
    comes meanwhile waits for it on the folder's write queue, then reads what changed."""
    from .workspace.folders import with_dirty

    def walk(store: Store) -> bool:
        return with_dirty(folder, store.prepare, bool)[0]

    try:
        await ls.write(folder, walk)
    except Exception as exc:  # the first checkpoint walks instead
        log.warning("%s: the first walk failed (%s)", folder.path, getattr(exc, "message", exc))


async def _until_leaving(folder: Folder, listener: HandoffListener, leave: asyncio.Event,
                         held: dict[str, HeldFolder], idle: float) -> str:
    import asyncio

    while True:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(leave.wait(), CHECK_S)
            return "asked to leave"
        if time.monotonic() - listener.last_request > idle:
            return f"no request for {idle:g} s"
        gone = _gone(folder, listener, held)
        if gone is not None:
            return gone


def _gone(folder: Folder, listener: HandoffListener | None,
          held: dict[str, HeldFolder]) -> str | None:
    if not folder.path.is_dir():
        return "the workspace is gone"
    if not (folder.store_root / "config.json").is_file():
        return "the store is gone"
    for name, what in held.items():  # held open from the start: fs/heldfolder.py
        if what.replaced():
            return f"{name} was replaced by another folder"
    if listener is not None and not listener.still_bound():
        return "its socket was removed or replaced"
    return None
