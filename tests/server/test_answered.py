"""``TurnbackProtocol.answered``: what the server's own start-up set-up waits for (the agent
follower and the CLI socket start once the requests received by then have their answers)."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from pygls.io_ import StdoutWriter

from turnback.server.app import create_server
from turnback.server.transport.wire import TurnbackProtocol


def _server() -> tuple[TurnbackProtocol, dict[str, asyncio.Event], io.BytesIO]:
    """A server whose ``test/wait`` request answers once its event named by ``key`` is set."""
    ls = create_server()
    proto = ls.protocol
    assert isinstance(proto, TurnbackProtocol)
    out = io.BytesIO()
    proto.set_writer(StdoutWriter(out))
    events: dict[str, asyncio.Event] = {}

    @ls.feature("test/wait")
    async def wait(ls: Any, params: Any) -> dict[str, str]:
        key = params["key"]
        events.setdefault(key, asyncio.Event())
        await events[key].wait()
        return {"key": key}

    return proto, events, out  # the protocol keeps its server


async def _until(cond: Any) -> None:
    """Until ``cond()`` holds, a loop turn at a time (the handlers run on this loop)."""
    while not cond():
        await asyncio.sleep(0)


async def test_waits_for_the_requests_received_before_and_not_for_later_ones() -> None:
    proto, events, out = _server()
    proto._handle_request(1, "test/wait", {"key": "a"})
    proto._handle_request(2, "test/wait", {"key": "b"})
    await _until(lambda: "a" in events and "b" in events)
    waiting = asyncio.ensure_future(proto.answered())
    await _until(lambda: proto._waiting)  # it has taken the requests received so far
    proto._handle_request(3, "test/wait", {"key": "later"})  # after: not waited for
    await _until(lambda: "later" in events)
    events["a"].set()
    await _until(lambda: b'"key":"a"' in out.getvalue())
    assert not waiting.done(), "request 2 has no answer yet"
    events["b"].set()
    await asyncio.wait_for(waiting, 10)
    assert b'"key":"later"' not in out.getvalue()  # request 3 still unanswered
    events["later"].set()
    await _until(lambda: b'"key":"later"' in out.getvalue())
    await proto.answered()  # nothing unanswered: returns at once


async def test_a_failed_or_unknown_request_counts_as_answered() -> None:
    proto, _events, out = _server()
    proto._handle_request(1, "no/such/method", None)  # answered with an error at once
    proto._handle_request(2, "test/wait", None)  # the handler fails: an error answer
    await asyncio.wait_for(proto.answered(), 10)
    assert out.getvalue().count(b'"error"') == 2
