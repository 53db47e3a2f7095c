"""turnback/checkpoints, turnback/createCheckpoint, turnback/changes, turnback/fileContent."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from ...errors import NotFound
from ...models import Checkpoint
from ...store.facade import WORKSPACE_SESSION, Store
from .. import methods
from ..app import TurnbackServer
from ..dirty import FLUSH_TIMEOUT_S, Ticket
from ..errors import about_param, rpc_method
from ..folders import Folder
from ..params import Params
from ..progress import WorkProgress
from .sessions import find_session

JSON = dict[str, Any]
T = TypeVar("T")
log = logging.getLogger("turnback.server")

async def find_checkpoint(
    ls: TurnbackServer, folder_uri: str | None, ref: str, name: str, method: str
) -> Folder:
    """The folder whose store knows checkpoint ``ref`` (every folder is searched if unnamed)."""
    folders = await ls.folders_for(folder_uri, method)
    if len(folders) == 1:
        return folders[0]  # the store's own error names the problem precisely
    for folder in folders:

        def probe(store: Store) -> bool:
            try:
                store.resolve_checkpoint(ref, name)
            except NotFound:
                return False
            return True

        with about_param(method, name):
            if await ls.read_or(folder, probe, lambda: False):
                return folder
    raise NotFound(f"{method}: param '{name}': no checkpoint {ref!r} in any open folder")


def with_dirty(
    folder: Folder,
    fn: Callable[[frozenset[str] | None], T],
    scanned: Callable[[T], bool] = lambda _res: True,
) -> tuple[T, Ticket]:
    """Run ``fn(dirty)`` with the watcher's changed paths, or None when they are not trusted.

    ``fn`` checkpoints the workspace (directly, or as the safety checkpoint of a
    rewind). If it fails, or ``scanned(result)`` says it took no checkpoint after
    all, the paths go back to the tracker for the next one. Runs on a worker
    thread under the folder's write lock.
    """
    watcher = folder.watcher
    # Untrusted, the checkpoint walks anyway: no need to wait for the watcher.
    # Why it walks is read before take(), which makes the tracker trusted again.
    trusted, reason = folder.tracker.trusted, folder.tracker.reason
    flushed = watcher is not None and trusted and watcher.flush(FLUSH_TIMEOUT_S)
    ticket = folder.tracker.take(walk=not flushed)
    if ticket.paths is None:
        why = "the watcher did not confirm in time" if trusted else reason
        log.info("%s: reading the whole workspace (%s)", folder.path, why)
    try:
        result = fn(ticket.paths)
    except BaseException:
        folder.tracker.give_back(ticket)
        raise
    if not scanned(result):
        folder.tracker.give_back(ticket)
    return result, ticket


def take_checkpoint(
    folder: Folder,
    store: Store,
    *,
    label: str | None,
    session_id: str | None,
    auto: bool,
    work: WorkProgress | None,
) -> tuple[Checkpoint, Ticket]:
    """Checkpoint reading only the watcher's dirty paths when they can be trusted."""
    return with_dirty(
        folder,
        lambda dirty: store.checkpoint(
            label=label,
            session_id=session_id,
            auto=auto,
            dirty=dirty,
            progress=work.report if work is not None else None,
        ),
    )


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.CHECKPOINTS)
    @rpc_method(methods.CHECKPOINTS)
    async def checkpoints(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.CHECKPOINTS)
        sid = p.ident("sessionId")
        folder_uri = p.string("folder")
        if sid is not None:
            folder = await find_session(ls, folder_uri, sid, methods.CHECKPOINTS)
        else:
            folder = await ls.folder(folder_uri, methods.CHECKPOINTS)

        def job(store: Store) -> JSON:
            return {"checkpoints": [c.to_json() for c in store.checkpoints(sid)]}

        out = await ls.read_or(folder, job, lambda: {"checkpoints": []})
        out["folder"] = folder.uri
        return out

    @ls.feature(methods.CREATE_CHECKPOINT)
    @rpc_method(methods.CREATE_CHECKPOINT)
    async def create_checkpoint(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.CREATE_CHECKPOINT)
        sid = p.ident("sessionId")
        label = p.string("label", max_len=1000)
        auto = p.boolean("auto")
        folder_uri = p.string("folder")
        if sid is not None:
            folder = await find_session(ls, folder_uri, sid, methods.CREATE_CHECKPOINT)
        else:
            folder = await ls.folder(folder_uri, methods.CREATE_CHECKPOINT)
        # A walk of the whole tree may take a while: show it (the watcher's
        # incremental checkpoints take milliseconds and would only flash a bar).
        work: WorkProgress | None = None
        if folder.tracker.count is None or p.has("workDoneToken"):
            work = WorkProgress(ls, "Turnback: checkpoint", p.raw.get("workDoneToken"))
            await work.begin("reading the workspace")
        try:
            cp, ticket = await ls.write(
                folder,
                lambda store: take_checkpoint(
                    folder, store, label=label, session_id=sid, auto=auto, work=work
                ),
                cancel=work.cancel_event if work is not None else None,
                create=True,
                sessions={sid or WORKSPACE_SESSION},
                checkpoints=True,
            )
        finally:
            if work is not None:
                work.end()
        return {
            "checkpoint": cp.to_json(),
            "incremental": ticket.paths is not None,
            "dirtyPaths": len(ticket.paths | ticket.ahead) if ticket.paths is not None else None,
            "preparedPaths": len(ticket.ahead - ticket.paths) if ticket.paths is not None else 0,
            "folder": folder.uri,
        }

    @ls.feature(methods.CHANGES)
    @rpc_method(methods.CHANGES)
    async def changes(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.CHANGES)
        ref_from = p.req_string("from", max_len=256)
        ref_to = p.string("to", max_len=256) or None
        paths = p.strings("paths")
        folder = await find_checkpoint(ls, p.string("folder"), ref_from, "from", methods.CHANGES)

        def job(store: Store) -> JSON:
            with about_param(methods.CHANGES, "from"):
                a = store.resolve_checkpoint(ref_from, "from")
            b = None
            if ref_to is not None:
                with about_param(methods.CHANGES, "to"):
                    b = store.resolve_checkpoint(ref_to, "to")
            with about_param(methods.CHANGES, "paths"):
                items = store.changes(a.id, b.id if b else None, paths)
            return {
                "changes": [c.to_json() for c in items],
                "from": a.id,
                "to": b.id if b else None,
                "folder": folder.uri,
            }

        return await ls.read(folder, job)

    @ls.feature(methods.FILE_CONTENT)
    @rpc_method(methods.FILE_CONTENT)
    async def file_content(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.FILE_CONTENT)
        ref = p.req_string("checkpoint", max_len=256)
        path = p.req_string("path")
        folder = await find_checkpoint(
            ls, p.string("folder"), ref, "checkpoint", methods.FILE_CONTENT
        )

        def job(store: Store) -> JSON:
            with about_param(methods.FILE_CONTENT, "checkpoint"):
                cp = store.resolve_checkpoint(ref)
            with about_param(methods.FILE_CONTENT, "path"):
                content = store.file_content(cp.id, path)
            return {**content.to_json(), "checkpoint": cp.id}

        return await ls.read(folder, job)
