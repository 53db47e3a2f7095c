"""The Turnback language server's class: what its features share.

:class:`TurnbackServer` holds the folders, the thread pools and the change
notifier, and the helpers every request uses to reach a folder's store off the
event loop. The methods themselves live in ``features/``, one module per group;
they import this module, and this module imports none of them (``app.py`` wires
them in and starts the server), so the dependencies point one way:
app → features → core → the rest (the ``turnback-server-layers`` contract in
pyproject.toml).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..errors import NotFound
from ..store.facade import Store
from .jobs import shortwrite
from .jobs.work import Pools, run_blocking
from .rpc.progress import WorkProgress
from .transport.framing import serve
from .transport.stdin import StdinReader
from .transport.wire import TurnbackProtocol, plain_json_converter
from .waits import within
from .workspace.folders import Folder, Folders
from .workspace.notify import ChangeNotifier
from .workspace.settings import Settings

log = logging.getLogger("turnback.server")

# How long ``shutdown`` waits for the stores' close (a checkpoint under way finishing) before
# it answers all the same; the close goes on, and ``exit`` ends the process after it.
SHUTDOWN_WAIT = 20.0
# Outside the "turnback" tree, so never forwarded to the client (see logs.py).
_transport_log = logging.getLogger("turnback_transport")

T = TypeVar("T")

VERSION = __version__  # pyproject.toml's version (tests/server/test_codecache.py checks)


class TurnbackServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "turnback",
            VERSION,
            text_document_sync_kind=types.TextDocumentSyncKind.None_,
            protocol_cls=TurnbackProtocol,
            converter_factory=plain_json_converter,
        )
        self.folders = Folders()
        self.pools = Pools()
        self.global_settings = Settings()
        self.exit_code = 0  # the process's: 1 after an ``exit`` with no ``shutdown`` first
        self.notifier: ChangeNotifier | None = None
        self.config_lock = asyncio.Lock()  # settings changes apply one at a time
        self.closing = False  # after shutdown/exit nothing more is sent to the client
        self._tasks: set[asyncio.Task[None]] = set()  # work after an answer (write's after)

    # -- folders -----------------------------------------------------------------------
    async def folder(self, uri: str | None, method: str) -> Folder:
        """The folder a request names, once its store has been looked for."""
        folder = self.folders.get(uri, method)
        await folder.ready()
        return folder

    async def folders_for(self, uri: str | None, method: str) -> list[Folder]:
        folders = self.folders.candidates(uri, method)
        for f in folders:
            await f.ready()
        return folders

    # -- store access ------------------------------------------------------------------
    async def read(self, folder: Folder, fn: Callable[[Store], T]) -> T:
        """Run a read on the reads pool; NotFound when the folder has no store yet."""

        def job() -> T:
            store = folder.open_store(create=False)
            if store is None:
                raise NotFound(_no_store(folder))
            return fn(store)

        return await run_blocking(self.pools.reads, job)

    async def read_or(
        self, folder: Folder, fn: Callable[[Store], T], missing: Callable[[], T]
    ) -> T:
        """Like :meth:`read`, but a folder without a store answers ``missing()``."""

        def job() -> T:
            store = folder.open_store(create=False)
            return missing() if store is None else fn(store)

        return await run_blocking(self.pools.reads, job)

    async def write(
        self,
        folder: Folder,
        fn: Callable[[Store], T],
        *,
        cancel: threading.Event | None = None,
        create: bool = False,
        sessions: set[str] | None = None,
        checkpoints: bool = False,
        after: Callable[[Store], object] | None = None,
        short: Callable[[Store], T | None] | None = None,
    ) -> T:
        """Run a write on the writes pool, one at a time per folder.

        ``short``: the same write, tried first on the event loop itself when it is
        certainly short (``shortwrite.py``: it saves the thread hand-offs); it answers
        None, having done nothing, when it cannot go on without waiting, and ``fn`` then
        runs on the pool.

        ``create`` makes the store if the folder has none. ``sessions`` and
        ``checkpoints`` say what the write changes; they are announced here only
        when no watcher will see it. ``after`` runs once the answer is on its way,
        still under the folder's write lock (a rewind's recording, see
        ``Store.finish_rewind``): no other write of this folder comes in between.
        Every write of the store changes session files only through its session
        calls (create, append, head and meta lines), so the kept listing summarizes
        again only the sessions the store says the write made
        (``Store.sessions_written``) instead of being dropped: a rewind, an import
        or a gc costs the next ``turnback/sessions`` its own sessions, not a listing
        of every session. A store opened by the write itself is listed in full.
        """
        on_loop = short is not None and cancel is None and shortwrite.certainly_short(folder)
        await folder.write_lock.acquire()
        held = True
        try:
            had_store = folder.store is not None

            written: list[set[str] | None] = [None]

            def job(fn: Callable[[Store], T | None] = fn) -> T | None:
                store = folder.open_store(create=create)
                if store is None:
                    raise NotFound(_no_store(folder))
                # held batches as raw frames where a preparer folds them when quiet
                store.objects.raw_held = folder.preparer is not None
                if not had_store:
                    return fn(store)
                return _noting_sessions(store, fn, written)

            try:
                got = job(short) if on_loop and short is not None else None
                if got is None:
                    got = await run_blocking(self.pools.writes, job, cancel)
                result = cast(T, got)
            finally:
                folder.listing.after_write(written[0])
            if not had_store and folder.store is not None:
                log.info("created the store %s", folder.store_root)
                await self.serve_cli(folder)
                if folder.watcher is not None and not folder.watcher.covers_store():
                    self.restart_watcher(folder)  # a new store outside the workspace
            store = folder.store
            if store is not None and store.objects.unfolded and folder.preparer is not None:
                folder.preparer.fold_soon()
            if store is not None and store.walked:
                # the walk decoded no tree: the next small checkpoint would read those on
                # its paths out of packs (bench/RESULTS.md, "Issue 16, fifth round")
                after = _then_warm(after)
            if after is not None and store is not None:
                self.spawn(self._after(folder, store, after, self._request_now()))
                held = False  # the task lets the lock go
        finally:
            if held:
                folder.write_lock.release()
        if not folder.watching and (sessions or checkpoints):
            self.announce(folder, sessions or set(), checkpoints)
        return result

    async def protocol_answered(self) -> None:
        """Until every request received so far is answered (``TurnbackProtocol.answered``)."""
        if isinstance(self.protocol, TurnbackProtocol):
            await self.protocol.answered()

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` on the event loop after the current answer, kept until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _request_now(self) -> int | str | None:
        """The request being handled, if its answer is not written yet (``wire.py``)."""
        protocol = self.protocol
        return protocol.request_now() if isinstance(protocol, TurnbackProtocol) else None

    async def _after(self, folder: Folder, store: Store, fn: Callable[[Store], object],
                     request: int | str | None = None) -> None:
        """``fn`` on the writes pool once ``request``'s answer is written, then the lock let
        go. Started at once, the pool's thread took the interpreter's lock for ``fn`` (the
        stat cache's save) in the loop iteration before the answer's, which then waited for
        it (bench/RESULTS.md, "Issue 16: the at-once request's server share")."""
        written: list[set[str] | None] = [None]

        def job() -> None:
            _noting_sessions(store, fn, written)

        try:
            if request is not None and isinstance(self.protocol, TurnbackProtocol):
                await self.protocol.answered_one(request)
            await run_blocking(self.pools.writes, job)
        except Exception as exc:
            log.error("%s: %s", folder.path, getattr(exc, "message", exc))
        finally:
            folder.listing.after_write(written[0])
            folder.write_lock.release()

    def follow(self, folder: Folder) -> None:
        """Start, restart or stop following agents for ``folder``, as its settings say."""
        from ..importers.registry import followable
        from .jobs.follow import AgentFollower

        sources = folder.settings.followed(followable())
        current = folder.follower
        if isinstance(current, AgentFollower) and current.sources == sources:
            return
        if current is not None:
            current.stop()
            folder.follower = None
        if sources:
            follower = AgentFollower(self, folder, sources)
            follower.start()
            folder.follower = follower
            log.info("%s: following %s", folder.path, ", ".join(sources))

    def work_progress(self, title: str) -> WorkProgress:
        """Progress for work the server starts itself (no request, no client token)."""
        return WorkProgress(self, title)

    def announce(self, folder: Folder, sessions: set[str], checkpoints: bool) -> None:
        if self.notifier is not None:
            self.notifier.add(folder.uri, sessions, checkpoints)

    async def serve_cli(self, folder: Folder) -> None:
        """Hand-offs from the CLI (``handoff.py``), once the folder's store is open."""
        from .jobs import handoff

        store = folder.store
        if store is None or folder.handoff is not None or self.closing:
            return
        listener = handoff.HandoffListener(self, folder, asyncio.get_running_loop())
        try:
            started = await listener.start(Path(store.root))
        except Exception:
            log.exception("%s: starting the CLI hand-off", folder.path)
            return
        if started:
            folder.handoff = listener

    def restart_watcher(self, folder: Folder) -> None:
        if self.notifier is None:
            return
        if folder.preparer is None:
            from .jobs import prepare

            if prepare.enabled():
                preparer = prepare.Preparer(self, folder, asyncio.get_running_loop())
                folder.tracker.on_add = preparer.poke
                folder.preparer = preparer
        folder.start_watcher(self.notifier.callback(folder.uri))

    # -- lifecycle -------------------------------------------------------------------------
    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log server-side failures; never answer them with more messages.

        pygls's default shows them to the user with ``window/showMessage``; when
        the failure is the pipe itself, that would fail again, forever.
        """
        _transport_log.error("%s: %s", getattr(source, "__name__", source), error)

    def close_all(self) -> None:
        self._stop_watching()
        self._close_stores()

    async def close_all_off_loop(self, wait: float = SHUTDOWN_WAIT) -> bool:
        """``close_all``, its stores closed on a thread of their own: a store's close waits
        for a checkpoint under way (its mutex), and on the loop that wait answered nothing.
        Waits ``wait`` seconds at most; False when the close is still under way then. The
        thread is not a daemon: the process ends after it, so no record is left half-written."""
        self._stop_watching()
        pool = ThreadPoolExecutor(1, thread_name_prefix="turnback-close")
        try:
            closing = asyncio.get_running_loop().run_in_executor(pool, self._close_stores)
            if not await within(asyncio.shield(closing), wait):
                log.warning("shutdown: a store's close still waits for its work after %g s; "
                            "the process ends once it is done", wait)
                return False
            return True
        finally:
            pool.shutdown(wait=False)

    def _stop_watching(self) -> None:
        for folder in self.folders.all():
            if folder.follower is not None:
                folder.follower.stop()
                folder.follower = None
            folder.stop_watcher()

    def _close_stores(self) -> None:
        for folder in self.folders.all():
            try:
                folder.close_store()
            except Exception:
                log.exception("closing the store of %s", folder.path)

    def _start_io_async(
        self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
    ) -> None:
        """pygls's stdio loop, replaced: stdin read on the event loop (no thread per message),
        every frame checked and bounded (``framing.py``)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = StdinReader(stdin or sys.stdin.buffer)
        assert isinstance(self.protocol, TurnbackProtocol)  # protocol_cls, above
        try:
            asyncio.run(serve(self._stop_event, reader, self.protocol))
        except BrokenPipeError:
            _transport_log.error("the client closed the pipe; shutting down")
        except KeyboardInterrupt:
            pass
        except SystemExit as stop:  # pygls's ``exit``: 1 when no ``shutdown`` came first (LSP)
            self.exit_code = stop.code if isinstance(stop.code, int) else 0
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        self.close_all()
        self.pools.shutdown()
        super().shutdown()  # type: ignore[no-untyped-call]


def _no_store(folder: Folder) -> str:
    return (
        f"no Turnback store for {folder.path} yet (looked in {folder.store_root}); "
        "create a checkpoint or import a session to start one"
    )


def _noting_sessions(store: Store, fn: Callable[[Store], T],
                     written: list[set[str] | None]) -> T:
    """``fn(store)``, the sessions it wrote put in ``written[0]`` (for
    ``ListingCache.after_write``): the store's count emptied first, so what came before
    this write is not its own."""
    store.sessions_written()
    try:
        return fn(store)
    finally:
        written[0] = store.sessions_written()


def _then_warm(after: Callable[[Store], object] | None) -> Callable[[Store], object]:
    """``after`` (if any), then the walk's trees read into memory (``Store.warm_trees``)."""
    def both(store: Store) -> None:
        if after is not None:
            after(store)
        started = time.perf_counter()
        # Garbage cycles pending at the freeze below would be frozen for good (never
        # collected: 10,854 objects after 50 walks, bench/probes/memory/redteam5_freeze.py):
        # collected here, before the trees are read, while the collector has little to walk
        # (at 42,000 folders: after the read, ~100 ms more of the folder's write lock)
        gc.collect()
        read = store.warm_trees()
        if read:
            # Out of the collector's sight, as app.py does with the modules at start: an
            # ``Entry`` is a tuple subclass, which the collector never untracks, so each full
            # collection walked the kept trees (SPEC's workspace: 20-50 ms against 1-15 ms).
            # They hold no cycles: reference counting frees a tree the cache drops.
            gc.freeze()
            log.info("%s: %d folder trees of the walk kept in memory (%.0f ms)", store.root,
                     read, (time.perf_counter() - started) * 1000)
    return both
