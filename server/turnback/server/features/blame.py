"""turnback/blame: who wrote each line of a file, as ranges of lines with their origin.

The walks are kept per folder (``Folder.blame``, dropped of its history when the store
changes, before the client hears ``turnback/didChange``) and continued after a new
checkpoint, so the editor's question on every cursor move costs a diff of the open file
against its last checkpointed version.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...store.facade import Store
from ..core import TurnbackServer
from ..rpc import methods
from ..rpc.errors import about_param, rpc_method
from ..rpc.params import Params

JSON = dict[str, Any]

MAX_TEXT = 8 * 1024 * 1024  # the editor's unsaved text, in characters
SAVE_AFTER = 0.1  # seconds after an answer that its walk is saved for the next process


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.BLAME)
    @rpc_method(methods.BLAME)
    async def blame(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.BLAME)
        path = p.req_string("path")
        at = p.string("checkpoint")
        text = p.string("text", max_len=MAX_TEXT)
        first = p.integer("startLine", 1, minimum=1)
        last = p.opt_integer("endLine", minimum=1)
        folder = await ls.folder(p.string("folder"), methods.BLAME)
        cache = folder.blame
        trusted = folder.watcher is not None  # else nothing says when the store changed

        def job(store: Store) -> JSON:
            with about_param(methods.BLAME, "path"):
                got = cache.blame(store, path, at, text.encode() if text is not None else None,
                                  trusted, save=not folder.settings.read_only)
            return got.ranges_json(first, last, cache.origins_json())

        res = await ls.read(folder, job)
        res["folder"] = folder.uri

        def save() -> None:
            store = folder.open_store(create=False)
            if store is not None:
                cache.save_pending(store)

        # once the answer is out (a moment later), not in its way: the next CLI run
        # continues this walk (attribution/saved.py)
        asyncio.get_running_loop().call_later(SAVE_AFTER, ls.pools.reads.submit, save)
        return res
