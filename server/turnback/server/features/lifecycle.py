"""initialize, folders, settings and shutdown.

Folders come from ``initialize`` (``workspaceFolders``, else ``rootUri``) and
``workspace/didChangeWorkspaceFolders``. Settings come from
``initializationOptions`` and ``workspace/didChangeConfiguration``; when the
client supports ``workspace/configuration`` the server also pulls the
``turnback`` section per folder, so each root of a multi-root workspace may have
its own store path.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from ...errors import InvalidInput
from .. import logs
from ..core import TurnbackServer
from ..jobs.work import run_blocking
from ..rpc.errors import to_jsonrpc
from ..workspace import settings
from ..workspace.folders import Folder
from ..workspace.notify import ChangeNotifier
from ..workspace.settings import Settings

log = logging.getLogger("turnback.server")

PULL_TIMEOUT_S = 2.0  # a client that never answers workspace/configuration must not hang us


def _supports_pull(ls: TurnbackServer) -> bool:
    caps = ls.client_capabilities
    ws = caps.workspace if caps is not None else None
    return bool(ws and ws.configuration)


async def _pull(ls: TurnbackServer, folder_uri: str) -> Settings | None:
    """This folder's settings from the client, or None (not supported, no answer, bad)."""
    if not _supports_pull(ls):
        return None
    try:
        items = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(
                    items=[types.ConfigurationItem(scope_uri=folder_uri, section=settings.SECTION)]
                )
            ),
            PULL_TIMEOUT_S,
        )
    except Exception as exc:
        log.info(
            "workspace/configuration for %s failed (%s); using pushed settings", folder_uri, exc
        )
        return None
    raw = items[0] if items else None
    if raw is None:
        return None
    try:
        where = f"settings of {folder_uri}"
        return settings.parse(_plain(raw, where), where)
    except InvalidInput as exc:
        log.warning("%s; keeping the previous settings", exc.message)
        return None


# the deepest settings a client may send: ours nest 3 levels; the JSON reader takes ~980
MAX_SETTINGS_NESTING = 64


def _plain(value: Any, where: str, depth: int = MAX_SETTINGS_NESTING) -> Any:
    """JSON from pygls, where nested objects may arrive as namedtuples. Nested past
    ``depth``: ``InvalidInput`` naming ``where`` (a walk of a client's 900 levels hit
    Python's recursion limit: -32603 and a traceback, redteam22)."""
    if isinstance(value, (dict, list)) or hasattr(value, "_asdict"):
        if depth <= 0:
            raise InvalidInput(
                f"{where} is nested deeper than {MAX_SETTINGS_NESTING} levels (Turnback's "
                "settings nest 3); send the 'turnback' section as documented")
        if isinstance(value, list):
            return [_plain(v, where, depth - 1) for v in value]
        items = value.items() if isinstance(value, dict) else value._asdict().items()
        return {k: _plain(v, where, depth - 1) for k, v in items}
    return value


async def open_folder(ls: TurnbackServer, folder: Folder) -> None:
    """Pull its settings, start watching, look for its store; then serve requests, and
    once the requests received meanwhile are answered, follow agents and serve the CLI."""
    try:
        pulled = await _pull(ls, folder.uri)
        if pulled is not None:
            folder.settings = pulled
        ls.restart_watcher(folder)
        await run_blocking(ls.pools.writes, lambda: folder.open_store(create=False))
        if folder.store is not None:
            log.info("%s: store %s", folder.path, folder.store_root)
        else:
            log.info(
                "%s: no store yet (it is created by the first checkpoint or import)", folder.path
            )
    except Exception as exc:
        folder.open_error = exc
        log.warning("%s: %s", folder.path, getattr(exc, "message", exc))
        return
    finally:
        folder.opened.set()
    # No request needs these, and they cost the event loop 65-100 ms at start (the
    # importers' modules, the socket, a background server's leave), which an agent's
    # first checkpoint, asked as the editor opens, waited for (bench/RESULTS.md, issue
    # 23, branch start23b). The follower's first read takes whatever the agents wrote since
    # the last import, so a later start misses no turn; a CLI that finds no socket works
    # alone. (The follower's first write came after the first checkpoint's anyway: one
    # write at a time per folder.)
    await ls.protocol_answered()
    async with folder.write_lock:  # not halfway through a settings change's reopening
        if ls.closing or folder not in ls.folders.all():
            return
        try:
            ls.follow(folder)
            await ls.serve_cli(folder)
        except Exception as exc:
            log.warning("%s: %s", folder.path, getattr(exc, "message", exc))


async def apply_settings(ls: TurnbackServer, folder: Folder, new: Settings) -> None:
    """Switch a folder to new settings; reopen its store when they touch it."""
    old = folder.settings
    if new == old:
        return
    async with folder.write_lock:
        folder.settings = new
        if new.store_key() != old.store_key():
            folder.stop_watcher()
            await run_blocking(ls.pools.writes, folder.close_store)
            try:
                await run_blocking(ls.pools.writes, lambda: folder.open_store(create=False))
            except Exception as exc:
                log.warning("%s: %s", folder.path, getattr(exc, "message", exc))
            ls.restart_watcher(folder)
            await ls.serve_cli(folder)
        elif new.watch != old.watch:
            ls.restart_watcher(folder)
    ls.follow(folder)
    log.info("%s: settings updated", folder.path)


def add_folder(ls: TurnbackServer, uri: str) -> Folder | None:
    try:
        folder = ls.folders.add(uri, ls.global_settings)
    except InvalidInput as exc:
        log.warning("ignoring workspace folder %s: %s", uri, exc.message)
        return None
    asyncio.get_running_loop().create_task(open_folder(ls, folder))
    return folder


def register(ls: TurnbackServer) -> None:
    @ls.feature(types.INITIALIZE)
    def on_initialize(ls: TurnbackServer, params: types.InitializeParams) -> None:
        loop = asyncio.get_running_loop()
        ls.notifier = ChangeNotifier(ls, loop)
        logs.attach_client(ls, loop)  # LSP allows window/logMessage before the answer
        try:
            options = _plain(params.initialization_options, "initializationOptions")
        except InvalidInput as exc:  # -32602, not a traceback: the client sent it
            log.warning("initialize: %s", exc.message)
            raise to_jsonrpc(exc) from None
        try:
            ls.global_settings = settings.parse(options, "initializationOptions")
        except InvalidInput as exc:
            log.warning("%s; using the defaults", exc.message)

    @ls.feature(types.INITIALIZED)
    async def on_initialized(ls: TurnbackServer, params: types.InitializedParams) -> None:
        uris = [f.uri for f in ls.workspace.folders.values()]
        if not uris and ls.workspace.root_uri:
            uris = [ls.workspace.root_uri]
        if not uris:
            log.warning(
                "the client sent no workspace folder: every request will fail "
                "until one is added (workspace/didChangeWorkspaceFolders)"
            )
        for uri in uris:
            add_folder(ls, uri)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: TurnbackServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed or []:
            folder = ls.folders.remove(removed.uri)
            if folder is not None:
                if folder.follower is not None:
                    folder.follower.stop()
                folder.stop_watcher()
                await run_blocking(ls.pools.writes, folder.close_store)
                log.info("%s: closed", folder.path)
        for added in params.event.added or []:
            add_folder(ls, added.uri)

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(
        ls: TurnbackServer, params: types.DidChangeConfigurationParams
    ) -> None:
        # Requests wait until their folder is settled: marking the folders before
        # the first await makes every request sent after this notification see
        # the new settings.
        folders = ls.folders.all()
        for folder in folders:
            folder.unsettle()
        try:
            async with ls.config_lock:
                where = "workspace/didChangeConfiguration"
                try:
                    pushed = _plain(params.settings, f"{where}: param 'settings'")
                    if settings.carries_settings(pushed):
                        ls.global_settings = settings.parse(pushed, where)
                except InvalidInput as exc:
                    log.warning("%s; keeping the previous settings", exc.message)
                    return
                for folder in folders:
                    await folder.opened.wait()
                    pulled = await _pull(ls, folder.uri)
                    try:
                        await apply_settings(ls, folder, pulled or ls.global_settings)
                    except Exception:
                        log.exception("%s: applying settings failed", folder.path)
        finally:
            for folder in folders:
                folder.settle()

    @ls.feature(types.SHUTDOWN)
    async def on_shutdown(ls: TurnbackServer, params: None) -> None:
        ls.closing = True
        # off the loop: a store's close waits for a checkpoint under way on the writes pool
        await ls.close_all_off_loop()

    @ls.feature(types.EXIT)
    def on_exit(ls: TurnbackServer, params: None) -> None:
        ls.closing = True
