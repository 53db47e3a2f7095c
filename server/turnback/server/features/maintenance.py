"""turnback/status and turnback/gc."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ...models import GcResult
from ...store.config import FORMAT_VERSION
from ...store.facade import Store
from ..core import TurnbackServer
from ..rpc import methods
from ..rpc.errors import rpc_method
from ..rpc.params import Params
from ..rpc.progress import WorkProgress
from ..workspace.folders import Folder

JSON = dict[str, Any]
# causes shown by this server, by store: once even where cache/notices-told cannot be written
_TOLD: dict[str, set[str]] = {}


def following(folder: Folder) -> JSON:
    """What the status bar shows of the agents followed (``follow.AgentFollower``)."""
    describe = getattr(folder.follower, "describe", None)
    if callable(describe):
        out: JSON = describe()
        return out
    s = folder.settings
    why = ("the workspace is not trusted" if s.read_only
           else "followAgents is off" if not s.follow_agents else "no agent to follow")
    return {"state": "off", "agents": [], "summary": f"not following agents ({why})"}


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.STATUS)
    @rpc_method(methods.STATUS)
    async def status(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.STATUS)
        folder = await ls.folder(p.string("folder"), methods.STATUS)

        def missing() -> JSON:
            return {
                "folder": str(folder.path),
                "store": str(folder.store_root),
                "formatVersion": FORMAT_VERSION,
                "sessions": 0,
                "checkpoints": 0,
                "bytes": 0,
                "exists": False,
            }

        def present(store: Store) -> JSON:
            found = store.notices()
            return {**store.status(), "exists": True,
                    "setAside": [n.to_json() for n in found],
                    "untold": [n.to_json() for n in store.untold_notices("server", found)]}

        out = await ls.read_or(folder, present, missing)
        out.setdefault("setAside", [])
        # what the store set aside, shown once for each cause (store/notices.py)
        told = _TOLD.setdefault(str(folder.store_root), set())
        for notice in out.pop("untold", []):
            if notice["key"] in told:
                continue  # a store whose cache cannot be written: once in this server
            told.add(notice["key"])
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"Turnback: {notice['message']}"))
        out["uri"] = folder.uri
        out["watching"] = folder.watching
        # Paths changed since this server's last checkpoint; null when unknown.
        out["dirtyPaths"] = folder.tracker.changed
        # ... of which a preparation has read ahead (see prepare.py)
        out["preparedPaths"] = folder.tracker.ahead
        out["following"] = following(folder)
        # The kernel's watch limit, when it keeps folders unwatched (checkpoints walk them)
        watcher = folder.watcher
        limit = watcher.limit if watcher is not None else None
        out["watchLimit"] = limit.to_json() if limit is not None else None
        return out

    @ls.feature(methods.GC)
    @rpc_method(methods.GC)
    async def gc(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.GC)
        folder = await ls.folder(p.string("folder"), methods.GC)
        dry_run = p.boolean("dryRun")
        keep_last = p.opt_integer("keepLast")
        keep_days = p.opt_integer("keepDays", maximum=365_000)
        quota = p.opt_integer("quotaBytes")
        work = WorkProgress(ls, "Turnback: collecting garbage", p.raw.get("workDoneToken"))
        await work.begin()
        try:

            def job(store: Store) -> GcResult:
                work.check()
                res: GcResult = store.gc(
                    dry_run=dry_run, keep_last=keep_last, keep_days=keep_days, quota_bytes=quota
                )
                return res

            res = await ls.write(folder, job, cancel=work.cancel_event, checkpoints=not dry_run)
        finally:
            work.end()
        return {**res.to_json(), "folder": folder.uri}
