"""turnback/turns, turnback/turnSteps, turnback/fileHistory, turnback/importCandidates,
turnback/continue: history as people think of it (turns of a session, versions of a
file), built by the store; the first run's count of sessions the importers would find;
continuing an agent from before a turn."""

from __future__ import annotations

from typing import Any

from ...errors import InvalidInput
from ...models import RewindResult
from ...store.facade import Store
from ..core import TurnbackServer
from ..jobs.work import run_blocking
from ..lookup import read_in, session_in
from ..rpc import methods
from ..rpc.answers import safety_pool
from ..rpc.errors import about_param, rpc_method
from ..rpc.params import MAX_LIMIT, Params
from ..workspace.folders import rewind_with_dirty

JSON = dict[str, Any]

DEFAULT_TURNS_PAGE = 100
DEFAULT_VERSIONS_PAGE = 100


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.TURNS)
    @rpc_method(methods.TURNS)
    async def turns(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.TURNS)
        offset = p.opt_integer("offset")
        limit = p.integer("limit", DEFAULT_TURNS_PAGE, minimum=1, maximum=MAX_LIMIT)
        sid, folder = await session_in(ls, p, methods.TURNS)

        def job(store: Store) -> JSON:
            page = store.turn_page(sid, offset, limit)
            out = []
            for t in page.turns:
                item = t.to_json()
                ch = page.changes.get(t.id)
                item["changes"] = ch.to_json(False) if ch is not None else None
                if t.before is None:
                    near = store.nearest_checkpoint(t)
                    item["nearest"] = near.to_json() if near is not None else None
                out.append(item)
            return {"turns": out, "total": page.total, "offset": page.offset,
                    "session": store.session_summary(sid).to_json()}

        return await read_in(ls, folder, job)

    @ls.feature(methods.TURN_STEPS)
    @rpc_method(methods.TURN_STEPS)
    async def turn_steps(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.TURN_STEPS)
        tid = p.req_ident("turnId")
        sid, folder = await session_in(ls, p, methods.TURN_STEPS)

        def job(store: Store) -> JSON:
            with about_param(methods.TURN_STEPS, "turnId"):
                steps = store.steps(sid, tid)
            return {"steps": [s.to_json() for s in steps]}

        return await read_in(ls, folder, job)

    @ls.feature(methods.FILE_HISTORY)
    @rpc_method(methods.FILE_HISTORY)
    async def file_history(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.FILE_HISTORY)
        path = p.req_string("path")
        offset = p.integer("offset", 0)
        limit = p.integer("limit", DEFAULT_VERSIONS_PAGE, minimum=1, maximum=MAX_LIMIT)
        folder = await ls.folder(p.string("folder"), methods.FILE_HISTORY)

        def job(store: Store) -> JSON:
            with about_param(methods.FILE_HISTORY, "path"):
                versions, total = store.file_history(path, offset, limit)
            by_id = safety_pool(store, [v.checkpoint for v in versions])
            return {"path": path, "versions": [v.to_json(by_id) for v in versions],
                    "total": total,
                    "offset": offset}

        return await read_in(ls, folder, job, lambda: {"path": path, "versions": [], "total": 0,
                                                       "offset": offset})

    @ls.feature(methods.IMPORT_CANDIDATES)
    @rpc_method(methods.IMPORT_CANDIDATES)
    async def import_candidates(ls: TurnbackServer, params: Any) -> JSON:
        # Loaded on the first call, not at every server start (like turnback/import).
        from ...importers.found import found_here

        p = Params(params, methods.IMPORT_CANDIDATES)
        folder = await ls.folder(p.string("folder"), methods.IMPORT_CANDIDATES)
        found = await run_blocking(ls.pools.reads, lambda: found_here(folder.path))
        return {"sources": [f.to_json() for f in found],
                "total": sum(f.files for f in found), "folder": folder.uri}

    register_continue(ls)


def register_continue(ls: TurnbackServer) -> None:
    @ls.feature(methods.CONTINUE)
    @rpc_method(methods.CONTINUE)
    async def continue_(ls: TurnbackServer, params: Any) -> JSON:
        import os
        from pathlib import Path

        from ...importers.base import Context
        from ...importers.resume import CONTINUABLE, find_session_file, plan_fork, write_fork

        p = Params(params, methods.CONTINUE)
        tid = p.req_ident("turnId")
        dry_run = p.boolean("dryRun")
        sid, folder = await session_in(ls, p, methods.CONTINUE)

        def job(store: Store) -> JSON:
            with about_param(methods.CONTINUE, "turnId"):
                turn = store.find_turn(sid, tid)
            agent = store.session_summary(sid).header.agent
            if agent not in CONTINUABLE:
                raise InvalidInput(f"{methods.CONTINUE}: session {sid!r} is a {agent} session; "
                                   f"only {', '.join(CONTINUABLE)} sessions can be continued "
                                   "by their agent")
            actx = Context(workspace=store.workspace, home=Path.home(), env=dict(os.environ))
            plan = plan_fork(agent, find_session_file(agent, sid, actx), turn.id, actx)
            before = turn.before
            res: RewindResult | None = None
            if before is not None and dry_run:
                res = store.rewind(before, None, "files", dry_run=True)
            elif before is not None:
                res = rewind_with_dirty(folder, lambda dirty: store.rewind(
                    before, None, "files", dirty=dirty, finish_later=True))
            if not dry_run:
                write_fork(plan, actx)
            return {**plan.to_json(), "dryRun": dry_run,
                    "rewind": res.to_json() if res is not None else None}

        out = await ls.write(folder, job, checkpoints=not dry_run, after=Store.finish_rewind)
        out["folder"] = folder.uri
        return out
