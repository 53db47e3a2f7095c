"""How the server writes messages: orjson for plain JSON, pygls's way for the rest."""

from __future__ import annotations

import io
import logging

import orjson
import pytest
from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage

from turnback.server.app import create_server
from turnback.server.transport.wire import TurnbackProtocol, _plain_body


def test_plain_answers_and_notifications_are_written_by_orjson() -> None:
    msg = JsonRPCResponseMessage(id=3, jsonrpc="2.0", result={"title": "café ☕", "n": [1, None]})
    body = _plain_body(msg)
    assert body is not None
    assert orjson.loads(body) == {"id": 3, "jsonrpc": "2.0", "result": msg.result}
    assert "☕".encode() in body  # UTF-8, not \\u escapes
    note = JsonRPCNotification(method="turnback/didChange", jsonrpc="2.0", params={"x": 1})
    assert orjson.loads(_plain_body(note) or b"") == {
        "method": "turnback/didChange", "jsonrpc": "2.0", "params": {"x": 1}
    }


def test_what_orjson_refuses_goes_the_pygls_way() -> None:
    for result in ({"path": "bad\udcff"}, {"n": 2**70}, {1: "non-str key"}):
        assert _plain_body(JsonRPCResponseMessage(id=1, jsonrpc="2.0", result=result)) is None
    typed = JsonRPCResponseMessage(id=1, jsonrpc="2.0", result=types.Position(line=1, character=2))
    assert _plain_body(typed) is None
    log = JsonRPCNotification(
        method="window/logMessage", jsonrpc="2.0",
        params=types.LogMessageParams(type=types.MessageType.Info, message="m"),
    )
    assert _plain_body(log) is None


def test_a_message_after_stdout_closed_is_dropped_without_a_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    """At ``exit`` the server closes its stdout while a folder's cancelled work still ends
    its progress (``$/progress``, a typed notification pygls writes): the write failed with
    "I/O operation on closed file", logged with its traceback and reported as an internal
    error. Now it is one line."""
    proto = create_server().protocol
    assert isinstance(proto, TurnbackProtocol)
    out = io.BytesIO()
    proto.set_writer(StdoutWriter(out))
    reported: list[BaseException] = []
    proto._server._report_server_error = (  # type: ignore[method-assign]
        lambda error, source: reported.append(error))
    out.close()
    end = types.ProgressParams(token="t", value=types.WorkDoneProgressEnd())
    with caplog.at_level(logging.INFO):
        proto._send_data(JsonRPCNotification(method="$/progress", jsonrpc="2.0", params=end))
        proto._send_data(JsonRPCResponseMessage(id=1, jsonrpc="2.0", result={"ok": True}))
        proto.send_error(None, -32700, "parse error")
    assert reported == []
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert sum("stdout is closed" in r.getMessage() for r in caplog.records) == 3
