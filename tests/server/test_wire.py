"""How the server writes messages: orjson for plain JSON, pygls's way for the rest."""

from __future__ import annotations

import orjson
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage

from turnback.server.wire import _plain_body


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
