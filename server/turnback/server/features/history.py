"""turnback/turns, turnback/turnSteps, turnback/fileHistory, turnback/importCandidates:
history as people think of it (turns of a session, versions of a file), built by the
store; the first run's count of sessions the importers would find."""

from __future__ import annotations

from typing import Any

from ...store.facade import Store
from .. import methods
from ..core import TurnbackServer
from ..errors import about_param, rpc_method
from ..lookup import find_session
from ..params import MAX_LIMIT, Params
from ..work import run_blocking

JSON = dict[str, Any]

DEFAULT_TURNS_PAGE = 100
DEFAULT_VERSIONS_PAGE = 100


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.TURNS)
    @rpc_method(methods.TURNS)
    async def turns(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.TURNS)
        sid = p.req_ident("sessionId")
        offset = p.opt_integer("offset")
        limit = p.integer("limit", DEFAULT_TURNS_PAGE, minimum=1, maximum=MAX_LIMIT)
        folder = await find_session(ls, p.string("folder"), sid, methods.TURNS)

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

        res = await ls.read(folder, job)
        res["folder"] = folder.uri
        return res

    @ls.feature(methods.TURN_STEPS)
    @rpc_method(methods.TURN_STEPS)
    async def turn_steps(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.TURN_STEPS)
        sid = p.req_ident("sessionId")
        tid = p.req_ident("turnId")
        folder = await find_session(ls, p.string("folder"), sid, methods.TURN_STEPS)

        def job(store: Store) -> JSON:
            with about_param(methods.TURN_STEPS, "turnId"):
                steps = store.steps(sid, tid)
            return {"steps": [s.to_json() for s in steps]}

        res = await ls.read(folder, job)
        res["folder"] = folder.uri
        return res

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
            return {"path": path, "versions": [v.to_json() for v in versions], "total": total,
                    "offset": offset}

        res = await ls.read_or(folder, job, lambda: {"path": path, "versions": [], "total": 0,
                                                     "offset": offset})
        res["folder"] = folder.uri
        return res

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

