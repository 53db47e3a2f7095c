"""turnback/import: read sessions other tools wrote into the store."""

from __future__ import annotations

from typing import Any

from ...fs.paths import expand_home
from ...store.facade import Store
from ..core import TurnbackServer
from ..rpc import methods
from ..rpc.errors import about_param, rpc_method
from ..rpc.params import Params
from ..rpc.progress import WorkProgress

JSON = dict[str, Any]


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.IMPORT)
    @rpc_method(methods.IMPORT)
    async def import_(ls: TurnbackServer, params: Any) -> JSON:
        # The importers are loaded by the first import, not at every server start.
        from ...importers.registry import SOURCES
        from ...importers.runner import import_source

        p = Params(params, methods.IMPORT)
        source = p.choice("source", SOURCES, "")
        if not source:
            raise p.missing("source")
        raw_path = p.string("path")
        folder = await ls.folder(p.string("folder"), methods.IMPORT)
        # A relative path means the workspace's, not wherever the server was started.
        path = str(folder.path / expand_home(raw_path)) if raw_path else None
        work = WorkProgress(ls, f"Turnback: importing {source}", p.raw.get("workDoneToken"))
        await work.begin(path or "looking in the tool's usual place")

        def job(store: Store) -> JSON:
            work.check()
            with about_param(methods.IMPORT, "path"):
                # work.check between lines, records and files: a $/cancelRequest (the
                # handler's task cancelled, see work.run_blocking) stops the import at
                # once, not only at the next MiB of progress or the end of a document.
                result = import_source(store, source, path, progress=work.report,
                                       check=work.check)
            out: JSON = result.to_json()
            return out

        try:
            out = await ls.write(folder, job, cancel=work.cancel_event, create=True)
        finally:
            work.end()
        if not folder.watching:
            ids = out.get("sessions")
            ls.announce(folder, {str(i) for i in ids} if isinstance(ids, list) else set(), True)
        out["folder"] = folder.uri
        return out
