"""turnback/pushHistory and turnback/pullHistory: the CLI's push and pull over the server."""

from __future__ import annotations

from typing import Any

from ...store.facade import Store
from ..core import TurnbackServer
from ..rpc import methods
from ..rpc.errors import rpc_method
from ..rpc.params import Params
from ..rpc.progress import WorkProgress

JSON = dict[str, Any]


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.PUSH_HISTORY)
    @rpc_method(methods.PUSH_HISTORY)
    async def push_history(ls: TurnbackServer, params: Any) -> JSON:
        from ...sharing.operations import push  # here: detect-secrets loads only when pushing

        p = Params(params, methods.PUSH_HISTORY)
        folder = await ls.folder(p.string("folder"), methods.PUSH_HISTORY)
        remote = p.string("remote")
        dry_run = p.boolean("dryRun")
        forget = p.strings("forget", max_items=1000) or []
        work = WorkProgress(ls, "Turnback: pushing history", p.raw.get("workDoneToken"))
        await work.begin()
        try:
            # a write: it must not run beside a gc of the same store (objects it reads)
            res: JSON = await ls.write(
                folder, lambda store: push(store, remote, dry_run, forget=forget),
                cancel=work.cancel_event)
        finally:
            work.end()
        return {**res, "folder": folder.uri}

    @ls.feature(methods.PULL_HISTORY)
    @rpc_method(methods.PULL_HISTORY)
    async def pull_history(ls: TurnbackServer, params: Any) -> JSON:
        from ...sharing.operations import pull

        p = Params(params, methods.PULL_HISTORY)
        folder = await ls.folder(p.string("folder"), methods.PULL_HISTORY)
        remote = p.string("remote")
        work = WorkProgress(ls, "Turnback: pulling history", p.raw.get("workDoneToken"))
        await work.begin()
        try:
            def job(store: Store) -> JSON:
                return pull(store, remote)

            res = await ls.write(folder, job, cancel=work.cancel_event, create=True,
                                 checkpoints=True)
        finally:
            work.end()
        return {**res, "folder": folder.uri}
