"""A write's work after the answer (``TurnbackServer.write``'s ``after``: the stat cache's
save, a rewind's recording) goes to the writes pool only once the request's answer is
written. Handed over in the loop iteration before the answer's, the pool's thread took the
interpreter's lock for the save while the loop still had the answer to encode and write
(bench/RESULTS.md, "Issue 16: the at-once request's server share").

In-process: the server's class, a folder with a store, pygls's request context set as its
``_handle_request`` sets it, and the answer written from the handler's done callback as
pygls writes it; no client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.server.core import TurnbackServer
from turnback.server.transport.wire import TurnbackProtocol
from turnback.server.workspace.folders import Folder
from turnback.server.workspace.settings import Settings

REQUEST = 7


class _Recorded(ThreadPoolExecutor):
    """The writes pool, noting each job handed to it (on the loop's thread, in order)."""

    def __init__(self, order: list[str]) -> None:
        super().__init__(1)
        self.order = order

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.order.append("pool job")
        return super().submit(fn, *args, **kwargs)


def _run_request(ls: TurnbackServer, folder: Folder, answered: bool = False) -> list[str]:
    """A request's handler that writes with an ``after``; what happened, in order."""
    protocol = ls.protocol
    assert isinstance(protocol, TurnbackProtocol)
    order: list[str] = []
    ls.pools.writes.shutdown()
    ls.pools.writes = _Recorded(order)

    def after(store: Store) -> None:
        order.append("after ran")

    async def handler() -> str:
        protocol._ctx_msg_id.set(REQUEST)  # as pygls's _handle_request, in the task's context
        protocol._unanswered.add(REQUEST)
        if answered:
            protocol._send_response(REQUEST, None)
        return await ls.write(folder, lambda store: "done", after=after)

    def answer(task: asyncio.Task[str]) -> None:
        order.append("answer")
        protocol._send_response(REQUEST, task.result())  # no writer: pygls logs and drops it

    async def go() -> None:
        task = asyncio.get_running_loop().create_task(handler())
        task.add_done_callback(answer)  # pygls's _send_handler_result
        await task
        while ls._tasks:
            await asyncio.gather(*list(ls._tasks))
        assert not folder.write_lock.locked()

    asyncio.run(go())
    return order


def test_the_work_after_the_answer_is_handed_to_the_pool_after_the_answer(
    server: TurnbackServer, store: Store, ws: Path
) -> None:
    folder = Folder(ws.as_uri(), ws, Settings())
    folder.store = store
    order = _run_request(server, folder)
    # before: ["pool job", "pool job", "answer", "after ran"] (the save handed over first)
    assert order == ["pool job", "answer", "pool job", "after ran"]


def test_a_request_answered_already_does_not_hold_the_work_after(
    server: TurnbackServer, store: Store, ws: Path
) -> None:
    """An id answered before the write (none to wait for): the work goes at once."""
    folder = Folder(ws.as_uri(), ws, Settings())
    folder.store = store
    order = _run_request(server, folder, answered=True)
    assert order[:2] == ["pool job", "pool job"] and "after ran" in order
