"""turnback/sessions, turnback/session and turnback/fork."""

from __future__ import annotations

import logging
from typing import Any

from ...errors import NotFound
from ...models import SessionSummary
from ...store.facade import Store, filter_sessions
from ...store.safety_names import event_summary, has_undo
from ..core import TurnbackServer
from ..lookup import find_session
from ..rpc import methods
from ..rpc.errors import rpc_method
from ..rpc.params import MAX_LIMIT, Params
from ..workspace.folders import Folder

JSON = dict[str, Any]
log = logging.getLogger("turnback.server")

DEFAULT_EVENTS_PAGE = 1000


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.SESSIONS)
    @rpc_method(methods.SESSIONS)
    async def sessions(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.SESSIONS)
        folder = await ls.folder(p.string("folder"), methods.SESSIONS)
        offset = p.integer("offset", 0)
        limit = p.opt_integer("limit", maximum=MAX_LIMIT)
        query = p.string("query") or None

        def page(every: list[SessionSummary]) -> JSON:
            if query:
                every = filter_sessions(every, query)
            items = every[offset : None if limit is None else offset + limit]
            return {"sessions": [s.to_json() for s in items], "total": len(every)}

        def job(store: Store) -> JSON:
            return page(folder.listing.sessions(store))

        cached = folder.listing.peek()
        if cached is not None:
            out = page(cached)  # no I/O: answered on the event loop, no thread hop
        else:
            early = (None if folder.listing.listed
                     else await early_answer(ls, folder, query, offset, limit))
            if early is not None and early[2]:  # the page of every session, as far as known
                out = {"sessions": [s.to_json() for s in early[0]], "total": early[1],
                       "partial": True}
            elif (early is not None and limit is not None
                  and min(offset + limit, early[1]) <= len(early[0])):
                # the saved first page now, the full listing behind it (then
                # turnback/didChange: ask again)
                end = min(offset + limit, early[1])
                out = {"sessions": [s.to_json() for s in early[0][offset:end]],
                       "total": early[1], "partial": True}
            else:
                out = await ls.read_or(folder, job, lambda: {"sessions": [], "total": 0})
        out["folder"] = folder.uri
        return out

    async def early_answer(ls: TurnbackServer, folder: Folder, query: str | None, offset: int,
                           limit: int | None) -> tuple[list[SessionSummary], int, bool] | None:
        """While no full listing was made: without ``query``, the saved first page
        (``Store.first_sessions``, with the total it was the first of; False), or on a store
        with more than ``COUNT_BEFORE_ANSWER`` bytes of sessions not counted
        (``Store.much_to_count``), the page asked of every session as far as known
        without counting, with how many matched (``Store.sessions_at_hand_page``; True).
        The first full listing is started behind either. None: list in full now (a new or
        small store, whose answer is then exact). Decided by the files' sizes, never by
        how long anything takes."""

        def job(store: Store) -> tuple[list[SessionSummary], int, bool] | None:
            named = folder.listing.named()
            # the saved page holds no query's matches, nor this server's own writes
            saved = store.first_sessions() if not (named or query) else None
            if saved is not None:
                return saved[0], saved[1], False
            if folder.listing.behind or store.much_to_count():
                return (*store.sessions_at_hand_page(named, offset, limit, query), True)
            return None

        got = await ls.read_or(folder, job, lambda: None)
        if got is not None and folder.listing.claim_first_listing():
            ls.spawn(list_then_say(ls, folder))
        return got

    async def list_then_say(ls: TurnbackServer, folder: Folder) -> None:
        try:
            await ls.read_or(folder, lambda s: bool(folder.listing.sessions(s)), lambda: False)
        except Exception as exc:  # a later request lists again and reports it
            log.warning("%s: listing the sessions: %s", folder.path, getattr(exc, "message", exc))
        finally:
            folder.listing.first_listing_ended()
        ls.announce(folder, set(), False)  # what was answered partial is to be asked again

    @ls.feature(methods.SESSION)
    @rpc_method(methods.SESSION)
    async def session(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.SESSION)
        sid = p.req_ident("sessionId")
        offset = p.integer("offset", 0)
        limit = p.integer("limit", DEFAULT_EVENTS_PAGE, minimum=1, maximum=MAX_LIMIT)
        folder_uri = p.string("folder")
        candidates = await ls.folders_for(folder_uri, methods.SESSION)
        if len(candidates) > 1:
            candidates = [await find_session(ls, folder_uri, sid, methods.SESSION)]
        folder = candidates[0]

        def unknown() -> JSON:
            raise NotFound(f"{methods.SESSION}: no session {sid!r} (param 'sessionId')")

        def job(store: Store) -> JSON:
            if not store.has_session(sid):  # looked for here: one trip to the reads pool
                unknown()
            page = store.session_page(sid, offset, limit)
            summary = store.session_summary(sid)
            # an undo's summary names what it undid: the checkpoints, only when one is here
            by_id = {c.id: c for c in store.checkpoints(None)} if has_undo(page.events) else {}
            return {
                "session": summary.to_json(),
                "head": page.head,
                "events": [
                    {
                        "id": e.id,
                        "parent": e.parent,
                        "ts": e.ts,
                        "kind": e.kind,
                        "summary": event_summary(e, by_id),
                        "data": e.data,
                    }
                    for e in page.events
                ],
                "total": page.total,
                "offset": offset,
                "problems": [pr.to_json() for pr in page.problems],
                "folder": folder.uri,
            }

        return await ls.read_or(folder, job, unknown)

    @ls.feature(methods.FORK)
    @rpc_method(methods.FORK)
    async def fork(ls: TurnbackServer, params: Any) -> JSON:
        p = Params(params, methods.FORK)
        event_id = p.req_ident("eventId")
        sid = p.ident("sessionId")
        folder_uri = p.string("folder")
        if sid is not None:
            candidates = [await find_session(ls, folder_uri, sid, methods.FORK)]
        else:
            candidates = await ls.folders_for(folder_uri, methods.FORK)
        last: NotFound | None = None
        for folder in candidates:
            try:
                session_id, head = await ls.write(folder, lambda s: s.fork(event_id, sid))
            except NotFound as exc:
                last = exc
                continue
            if not folder.watching:
                ls.announce(folder, {session_id}, False)
            return {"sessionId": session_id, "head": head, "folder": folder.uri}
        raise NotFound(
            f"{methods.FORK}: no event {event_id!r} (param 'eventId')"
            + (f" in session {sid!r}" if sid else "")
        ) from last
