"""A checkpoint that walks does not wait for the client's progress token.

The real extension declares ``window.workDoneProgress``, so the first checkpoint after a
server starts asks it for a token (``window/workDoneProgress/create``) at the moment its
extension host is busiest. The walk starts while the token is asked for: the answer comes
without the client's, and a bar is begun only if the token came while the work went on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from .conftest import TurnbackClient, config, folder_params, kill_and_stop, stop_server


class _UnansweredClient(TurnbackClient):
    """pygls's client, once the server process has exited, fails every pending request
    with ``set_exception``, including the tasks of its own handlers still waiting to answer
    the server, which a task refuses (RuntimeError, then ``stop`` raises it). Those tasks
    are taken out of its sight at that moment: after the process has exited, and with no
    await between that and pygls's own look, so a token asked for at any time before is
    covered (popping them earlier left a window in which a later request came in)."""

    async def _server_exit(self) -> None:
        if self._server is not None:
            await self._server.wait()
        futures = self.protocol._request_futures
        for key in [k for k, f in futures.items() if isinstance(f, asyncio.Task)]:
            futures.pop(key)
        await super()._server_exit()  # its own wait returns without yielding now


def _client(answer: asyncio.Event, asked: list[str], *, refuse: bool = False
            ) -> TurnbackClient:
    """A client that answers ``window/workDoneProgress/create`` only once ``answer`` is set
    (never, if it never is), or, ``refuse``, answers it with an error at once."""
    client = _UnansweredClient()
    register_lsp_features(client, {k: v for k, v in DEFAULT_CLIENT_FEATURES.items()
                                   if k != types.WINDOW_WORK_DONE_PROGRESS_CREATE})

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    async def create(params: types.WorkDoneProgressCreateParams) -> None:
        asked.append(str(params.token))
        client.progress_reports.setdefault(params.token, [])
        if refuse:
            raise RuntimeError("this client shows no progress")
        await answer.wait()

    return client


async def _checkpoint_with_a_late_token(ws: Path, answer_at: str) -> tuple[
        dict[str, Any], list[str], dict[str, list[Any]]]:
    answer = asyncio.Event()
    asked: list[str] = []
    cfg = config()
    cfg.client_factory = lambda: _client(answer, asked)
    client = await cfg.start()
    assert isinstance(client, TurnbackClient)
    try:
        await client.initialize_session(folder_params(ws))
        if answer_at == "before":
            pending = asyncio.ensure_future(client.call("turnback/createCheckpoint", {}))
            while not asked:  # the token is asked for: let the client answer at once
                await asyncio.sleep(0.005)
            answer.set()
            got = await pending
        else:
            got = await client.call("turnback/createCheckpoint", {})
            answer.set()
        # the server is still whole: a later checkpoint is answered (and sees the edit)
        (ws / "later.txt").write_text("after the first checkpoint\n")
        later = await client.call("turnback/createCheckpoint", {})
        assert later["checkpoint"]["id"] != got["checkpoint"]["id"]
        reports = {str(k): list(v) for k, v in client.progress_reports.items()}
        await stop_server(client)
    finally:
        await kill_and_stop(client)
    return got, asked, reports


async def test_the_walk_is_answered_before_the_client_gives_its_token(ws: Path) -> None:
    got, asked, reports = await _checkpoint_with_a_late_token(ws, "after")
    assert got["incremental"] is False  # the walk of the whole workspace
    assert got["checkpoint"]["files"] == 3
    assert len(asked) >= 1  # the token was asked for, and the answer did not wait for it
    assert reports[asked[0]] == []  # and no bar was begun once the work was over


async def test_a_token_given_during_the_walk_shows_the_bar_begun_and_ended(ws: Path) -> None:
    got, asked, reports = await _checkpoint_with_a_late_token(ws, "before")
    assert got["checkpoint"]["files"] == 3
    kinds = [type(v).__name__ for v in reports[asked[0]]]
    # the work may be over before the token's answer is read: then no bar at all
    assert kinds in ([], ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]) or (
        kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"), kinds


@pytest.mark.parametrize("how", ["never", "error"])
async def test_a_client_that_never_gives_the_token_gets_its_checkpoints_and_a_clean_exit(
        ws: Path, how: str) -> None:
    """Red team (redteam6): the token's request left unanswered for good, or refused. Every
    checkpoint is answered, nothing of a bar is sent, a cancel for a token never given is
    ignored, and the server exits at shutdown with the request still pending (then
    answered, to no one)."""
    asked: list[str] = []
    never = asyncio.Event()
    cfg = config()
    cfg.client_factory = lambda: _client(never, asked, refuse=how == "error")
    client = await cfg.start()
    assert isinstance(client, TurnbackClient)
    try:
        await client.initialize_session(folder_params(ws))
        first = await client.call("turnback/createCheckpoint", {})
        assert first["incremental"] is False and asked
        client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                               types.WorkDoneProgressCancelParams(token="never-given"))
        (ws / "later.txt").write_text("after\n")
        client.progress_reports.setdefault("mine", [])  # the client's own token
        later = await client.call("turnback/createCheckpoint", {"workDoneToken": "mine"})
        assert later["checkpoint"]["id"] != first["checkpoint"]["id"]
        assert all(v == [] for k, v in client.progress_reports.items() if str(k) in asked)
        await stop_server(client)  # fails if the server does not exit
        assert client._server is not None and client._server.returncode == 0
    finally:
        never.set()  # the client's answer, after the server's end
        await kill_and_stop(client)
