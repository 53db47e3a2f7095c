"""The JSON-RPC surface attacked with what the Hypothesis fuzz (test_fuzz.py) does not draw:
bytes that are not a well-framed message, and strings JSON allows that no file system or
UTF-8 output does (a lone surrogate, ``\\ud800``). The server answers or ignores, and stays up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import TurnbackClient, started

INVALID = -32602


async def send_raw(client: TurnbackClient, data: bytes) -> None:
    """Bytes written to the server's stdin as they are, outside any frame."""
    proc = client._server
    assert proc is not None and proc.stdin is not None
    proc.stdin.write(data)
    await proc.stdin.drain()


async def still_answers(client: TurnbackClient) -> None:
    st = await client.call("turnback/status", {})
    assert st["watching"] is True
    proc = client._server
    assert proc is not None and proc.returncode is None


@pytest.mark.parametrize("junk", [
    b"X" * (17 << 20) + b"\r\n",  # one header line past the reader's 16 MB line limit
    # a Content-Length too small: the rest of a 20 MB body is read as a header line
    b"Content-Length: 2\r\n\r\n{}" + b"Y" * (20 << 20) + b"\r\n\r\n",
], ids=["17MB-line", "short-length-20MB-body"])
async def test_a_line_past_the_reader_limit_does_not_end_the_server(
    client: TurnbackClient, junk: bytes
) -> None:
    await send_raw(client, junk)
    await still_answers(client)


@pytest.mark.parametrize("junk", [
    b"Content-Length: -5\r\n\r\n{}\r\n\r\n",
    b"Content-Type: x\r\n\r\n",  # no Content-Length
    b"Content-Length: 12\r\n\r\n{\"id\": 1,]}",  # not JSON
    b"Content-Length: 2\r\n\r\n[]",  # JSON, not a message
    b"Content-Length: 10\r\n\r\n\"\\ud800\"  ",  # a lone surrogate, alone
], ids=["negative", "missing", "not-json", "array", "surrogate"])
async def test_a_bad_frame_is_dropped_and_the_server_answers_on(
    client: TurnbackClient, junk: bytes
) -> None:
    await send_raw(client, junk)
    # (each is answered since rpc21: tests/server/test_framing.py; a stray blank line between
    # messages is skipped)
    await send_raw(client, b"\r\n")
    await still_answers(client)


@pytest.mark.parametrize("method,params,name", [
    ("turnback/status", {"folder": "/work/\ud800"}, "folder"),
    ("turnback/createCheckpoint", {"label": "l\ud800"}, "label"),
    ("turnback/sessions", {"query": "\udfff"}, "query"),
    ("turnback/fileContent", {"checkpoint": "latest", "path": "a\ud800"}, "path"),
    ("turnback/rewind", {"checkpoint": "latest", "paths": ["a\ud800"]}, "paths[0]"),
    ("turnback/session", {"sessionId": "s\ud800"}, "sessionId"),
])
async def test_a_lone_surrogate_is_refused_by_name(
    client: TurnbackClient, ws: Path, method: str, params: dict[str, object], name: str
) -> None:
    """JSON may carry ``\\ud800``; no file name and no UTF-8 text can: a label so made was
    stored, then ``turnback checkpoints`` failed on it (UnicodeEncodeError), and a folder
    so named was an internal error (-32603) with a traceback shown to the user."""
    await client.call("turnback/createCheckpoint", {"label": "before"})
    before = (ws / ".turnback" / "checkpoints.jsonl").read_bytes()
    await client.fails(method, params, INVALID, f"'{name}'", "surrogate")
    assert (ws / ".turnback" / "checkpoints.jsonl").read_bytes() == before
    await still_answers(client)


async def test_a_request_after_shutdown_is_refused_not_left_unanswered(
    client: TurnbackClient,
) -> None:
    """LSP: requests after ``shutdown`` error with InvalidRequest. pygls dropped them
    unanswered, so a client (a second window's command, a late hover) waited for ever."""
    await client.call("shutdown")
    await client.fails("turnback/createCheckpoint", {}, -32600, "shutdown", "exit")
    assert await client.call("shutdown") is None  # asked again (the fixture's stop does)


@pytest.mark.parametrize("options", [
    {"turnback": {"ignores": ["build/", "a\ud800*"]}},
    {"turnback": {"ignores": ["a\x00b"]}},
    {"turnback": {"storePath": "store-\udfff"}},
    {"turnback": {"storePath": "store\x00"}},
], ids=["ignores-surrogate", "ignores-nul", "storePath-surrogate", "storePath-nul"])
async def test_a_setting_no_file_name_can_hold_is_refused_by_name(
    ws: Path, options: dict[str, object]
) -> None:
    """The settings are the other way strings reach the store (redteam21): a lone surrogate
    (or a NUL) in ``turnback.ignores`` or ``turnback.storePath`` failed every checkpoint of
    the folder with an internal error (UnicodeEncodeError) for as long as the setting
    stood. The setting is refused as any bad setting is: logged by name, defaults used."""
    (ws / "f.txt").write_text("x")
    async with started(ws, options=options) as client:
        await client.call("turnback/createCheckpoint", {"label": "after"})
        st = await client.call("turnback/status", {})
        assert st["checkpoints"] == 1
        assert st["store"] == str(ws / ".turnback"), "the defaults, not the refused store path"
