"""Which open folder a request means, when it names a session or a checkpoint.

Ids say which store they belong to, so a request may name one without its
folder; with several folders open, each store is asked. Several feature modules
need these lookups, and feature modules never import each other (the
``turnback-server-features`` contract in pyproject.toml), so they live here,
below the features and above the server's class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import NotFound
from ..store.facade import Store
from .core import TurnbackServer
from .rpc.errors import about_param
from .rpc.params import Params
from .workspace.folders import Folder

JSON = dict[str, Any]


async def find_session(
    ls: TurnbackServer, folder_uri: str | None, session_id: str, method: str
) -> Folder:
    """The folder whose store holds ``session_id`` (every folder is searched if unnamed)."""
    for folder in await ls.folders_for(folder_uri, method):
        if await ls.read_or(folder, lambda s: s.has_session(session_id), lambda: False):
            return folder
    raise NotFound(f"{method}: no session {session_id!r} (param 'sessionId')")


async def session_in(ls: TurnbackServer, p: Params, method: str) -> tuple[str, Folder]:
    """A request's required ``sessionId`` and the folder that holds it (its ``folder``, if
    named, narrows the search): what every method about one session reads first."""
    sid = p.req_ident("sessionId")
    return sid, await find_session(ls, p.string("folder"), sid, method)


async def read_in(ls: TurnbackServer, folder: Folder, job: Callable[[Store], JSON],
                  missing: Callable[[], JSON] | None = None) -> JSON:
    """``job``'s answer, read in ``folder``'s store, with the folder's URI (every answer
    names its folder); a folder without a store answers ``missing()``, or NotFound."""
    res = await (ls.read(folder, job) if missing is None else ls.read_or(folder, job, missing))
    res["folder"] = folder.uri
    return res


async def session_or_folder(
    ls: TurnbackServer, folder_uri: str | None, session_id: str | None, method: str
) -> Folder:
    """``find_session`` when the request names a session; else the folder it names (or the
    only one open)."""
    if session_id is not None:
        return await find_session(ls, folder_uri, session_id, method)
    return await ls.folder(folder_uri, method)


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
