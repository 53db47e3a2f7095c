"""The progress token asked for while the work goes on, against a client that answers late,
with an error, or cancels: ``WorkProgress`` over pygls's own ``Progress``, the protocol
faked (no server process: what is kept in memory is what is looked at)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types
from pygls.progress import Progress

from turnback.server.rpc.progress import Cancelled, WorkProgress

CAPS = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))


class _Client:
    """The protocol side ``Progress`` talks to: each create request waits for the test."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, asyncio.Future[None]]] = []
        self.sent: list[Any] = []  # $/progress notifications, in order

    async def send_request_async(self, method: str, params: Any) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.asked.append((params.token, fut))
        await fut

    def notify(self, method: str, params: Any) -> None:
        self.sent.append(params)


def _server() -> tuple[Any, _Client]:
    client = _Client()
    return SimpleNamespace(work_done_progress=Progress(client),  # type: ignore[arg-type]
                           client_capabilities=CAPS), client


async def _settle() -> None:
    for _ in range(5):  # the begin task's steps: a few turns of the loop
        await asyncio.sleep(0)


async def test_tokens_answered_after_the_work_is_over_are_not_kept() -> None:
    """The client answers ``window/workDoneProgress/create`` once the checkpoints are
    answered (its extension host busy): pygls registers each token on that answer. Kept
    for ever before (one entry per walking checkpoint, never ended); dropped now."""
    ls, client = _server()
    works = [WorkProgress(ls, "Turnback: checkpoint") for _ in range(20)]
    for work in works:
        work.begin_soon("reading the workspace")
    await _settle()
    assert len(client.asked) == 20
    for work in works:
        work.finish()  # each checkpoint answered before its token came
    for _token, fut in client.asked:
        fut.set_result(None)
    await _settle()
    assert ls.work_done_progress.tokens == {}
    assert client.sent == []  # and no bar begun for work that is over


async def test_a_client_that_refuses_the_token_leaves_the_work_going_without_a_bar() -> None:
    ls, client = _server()
    work = WorkProgress(ls, "Turnback: checkpoint")
    work.begin_soon()
    await _settle()
    client.asked[0][1].set_exception(RuntimeError("no progress here"))
    await _settle()
    work.report(5, 10)  # dropped: no bar
    work.finish()
    assert client.sent == [] and ls.work_done_progress.tokens == {}


async def test_a_cancel_sent_between_the_token_and_the_begin_stops_the_work() -> None:
    """The client cancels a token it has just given, before ``begin`` went out."""
    ls, client = _server()
    work = WorkProgress(ls, "Turnback: checkpoint")
    work.begin_soon()
    await _settle()
    token, fut = client.asked[0]
    fut.set_result(None)
    await asyncio.sleep(0)  # the create answered, the token registered ...
    if token in ls.work_done_progress.tokens:  # ... and cancelled (pygls's cancel handler)
        ls.work_done_progress.tokens[token].cancel()
    await _settle()
    with pytest.raises(Cancelled):
        work.check()
    work.finish()
    assert ls.work_done_progress.tokens == {}


async def test_a_client_that_never_answers_holds_nothing_of_the_work() -> None:
    ls, client = _server()
    work = WorkProgress(ls, "Turnback: checkpoint")
    work.begin_soon()
    await _settle()
    work.report(1, 2)  # reports before a bar are dropped, the work goes on
    work.check()
    work.finish()
    assert client.sent == [] and ls.work_done_progress.tokens == {}
