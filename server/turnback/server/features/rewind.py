"""turnback/rewind and turnback/undo."""

from __future__ import annotations

from typing import Any

from ...models import RewindResult
from ...store.facade import MODES, Store
from ..core import TurnbackServer
from ..lookup import find_checkpoint
from ..rpc import methods
from ..rpc.errors import about_param, rpc_method
from ..rpc.params import Params
from ..workspace.folders import rewind_with_dirty

JSON = dict[str, Any]


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.REWIND)
    @rpc_method(methods.REWIND)
    async def rewind(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.REWIND)
        ref = p.req_string("checkpoint", max_len=256)
        paths = p.strings("paths")
        mode = p.choice("mode", MODES, "files")
        dry_run = p.boolean("dryRun")
        folder = await find_checkpoint(ls, p.string("folder"), ref, "checkpoint", methods.REWIND)

        def job(store: Store) -> RewindResult:
            with about_param(methods.REWIND, "checkpoint"):
                cp = store.resolve_checkpoint(ref)

            def go(dirty: frozenset[str] | None) -> RewindResult:
                with about_param(methods.REWIND, "paths"):
                    return store.rewind(cp.id, paths=paths, mode=mode, dry_run=dry_run, dirty=dirty,
                                        finish_later=True)

            if dry_run or mode == "conversation":
                return go(None)  # no safety checkpoint: the dirty paths stay for the next one
            return rewind_with_dirty(folder, go)

        res = await ls.write(folder, job, checkpoints=not dry_run, after=Store.finish_rewind)
        return {**res.to_json(), "folder": folder.uri}

    @ls.feature(methods.UNDO)
    @rpc_method(methods.UNDO)
    async def undo(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.UNDO)
        folder = await ls.folder(p.string("folder"), methods.UNDO)
        dry_run = p.boolean("dryRun")
        def job(store: Store) -> RewindResult:
            if dry_run:
                return store.undo(dry_run=True)
            return rewind_with_dirty(
                folder, lambda dirty: store.undo(dirty=dirty, finish_later=True))

        res = await ls.write(folder, job, checkpoints=not dry_run, after=Store.finish_rewind)
        return {**res.to_json(), "folder": folder.uri}
