"""turnback/checkpoints, turnback/createCheckpoint, turnback/changes, turnback/fileContent."""

from __future__ import annotations

from typing import Any, TypeVar, overload

from ...models import Checkpoint
from ...store.facade import WORKSPACE_SESSION, Store
from ..core import TurnbackServer
from ..jobs import shortwrite
from ..lookup import find_checkpoint, read_in, session_or_folder
from ..rpc import methods
from ..rpc.answers import checkpoint_json, safety_pool
from ..rpc.errors import about_param, rpc_method
from ..rpc.params import Params
from ..rpc.progress import WorkProgress
from ..watching.dirty import Ticket
from ..workspace.folders import Folder, WouldWalk, with_dirty

JSON = dict[str, Any]
T = TypeVar("T")


@overload
def said_as_listed(store: Store, taken: tuple[Checkpoint, T]) -> tuple[JSON, T]: ...
@overload
def said_as_listed(store: Store, taken: tuple[Checkpoint, T] | None
                   ) -> tuple[JSON, T] | None: ...
def said_as_listed(store: Store, taken: tuple[Checkpoint, T] | None
                   ) -> tuple[JSON, T] | None:
    """A new checkpoint as ``turnback/checkpoints`` lists it (``checkpoint_json``), made in
    the write that took it, where the store is at hand; None (nothing taken) passes."""
    if taken is None:
        return None
    cp, rest = taken
    return checkpoint_json(cp, safety_pool(store, [cp])), rest


def take_checkpoint(
    folder: Folder,
    store: Store,
    *,
    label: str | None,
    session_id: str | None,
    auto: bool,
    work: WorkProgress | None,
) -> tuple[Checkpoint, Ticket]:
    """Checkpoint reading only the watcher's dirty paths when they can be trusted.

    The stat cache is saved after the answer (``Store.save_scan_cache``, the caller's
    ``after``): what the answer promises is the objects and the record on disk.
    """
    return with_dirty(
        folder,
        lambda dirty: store.checkpoint(
            label=label,
            session_id=session_id,
            auto=auto,
            dirty=dirty,
            progress=work.report if work is not None else None,
            save_later=True,
        ),
    )


def take_checkpoint_now(
    folder: Folder,
    store: Store,
    *,
    label: str | None,
    session_id: str | None,
    auto: bool,
) -> tuple[Checkpoint, Ticket] | None:
    """``take_checkpoint`` on the event loop (``shortwrite.py``), or None with nothing done
    (the paths back to the tracker) when the flush found many paths or events lost, or
    the store cannot go on without waiting."""
    def short(dirty: frozenset[str] | None) -> Checkpoint | None:
        if dirty is None or not shortwrite.few(dirty):
            return None
        return store.checkpoint_now(dirty, label=label, session_id=session_id, auto=auto)

    try:
        cp, ticket = with_dirty(folder, short, scanned=lambda got: got is not None, walk=False)
    except WouldWalk:
        return None
    return None if cp is None else (cp, ticket)


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.CHECKPOINTS)
    @rpc_method(methods.CHECKPOINTS)
    async def checkpoints(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.CHECKPOINTS)
        sid = p.ident("sessionId")
        folder = await session_or_folder(ls, p.string("folder"), sid, methods.CHECKPOINTS)

        def job(store: Store) -> JSON:
            items = store.checkpoints(sid)
            # a safety checkpoint's words name checkpoints of any session
            by_id = {c.id: c for c in (items if sid is None else store.checkpoints(None))}
            return {"checkpoints": [checkpoint_json(c, by_id) for c in items]}

        return await read_in(ls, folder, job, lambda: {"checkpoints": []})

    @ls.feature(methods.CREATE_CHECKPOINT)
    @rpc_method(methods.CREATE_CHECKPOINT)
    async def create_checkpoint(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.CREATE_CHECKPOINT)
        sid = p.ident("sessionId")
        label = p.string("label", max_len=1000)
        auto = p.boolean("auto")
        folder = await session_or_folder(ls, p.string("folder"), sid, methods.CREATE_CHECKPOINT)
        # A walk of the whole tree may take a while: show it (the watcher's
        # incremental checkpoints take milliseconds and would only flash a bar). The walk
        # does not wait for the client's progress token: with a client answering in 100 ms,
        # the first one at start came 0.13-0.14 s after ``initialized`` when it waited,
        # 0.02-0.03 s now (bench/RESULTS.md, branch start23c).
        work: WorkProgress | None = None
        if folder.tracker.count is None or p.has("workDoneToken"):
            work = WorkProgress(ls, "Turnback: checkpoint", p.raw.get("workDoneToken"))
            work.begin_soon("reading the workspace")
        try:
            said, ticket = await ls.write(
                folder,
                lambda store: said_as_listed(store, take_checkpoint(
                    folder, store, label=label, session_id=sid, auto=auto, work=work
                )),
                cancel=work.cancel_event if work is not None else None,
                create=True,
                sessions={sid or WORKSPACE_SESSION},
                checkpoints=True,
                after=Store.save_scan_cache,
                short=lambda store: said_as_listed(store, take_checkpoint_now(
                    folder, store, label=label, session_id=sid, auto=auto
                )),
            )
        finally:
            if work is not None:
                work.finish()
        return {
            "checkpoint": said,
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
