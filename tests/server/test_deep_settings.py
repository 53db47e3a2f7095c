"""Settings a client nests 900 deep (``features/lifecycle._plain``, the one walk of a client's
values in ``server/features/``): before trust24 ``initialize`` answered -32603 with a
``RecursionError`` traceback in the log, a ``workspace/didChangeConfiguration`` logged one,
and a ``workspace/configuration`` answer so nested failed its folder's open (logged as
the folder's error). Now -32602 naming the param and the bound; the others keep their settings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .rawio import RawServer, frame, request

DEEP = '{"a": ' * 900 + "1" + "}" * 900  # the JSON reader takes it (~980 is its limit)


def _body(fields: str) -> bytes:
    return frame(('{"jsonrpc": "2.0", ' + fields + "}").encode())


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawServer]:
    server = RawServer(tmp_path)
    try:
        yield server
    finally:
        server.close()


def _no_traceback(raw: RawServer) -> None:
    log = raw.stderr()
    assert "Traceback" not in log and "RecursionError" not in log, log[-3000:]


def test_initialization_options_nested_900_deep_are_refused_by_name(raw: RawServer) -> None:
    raw.send(_body('"id": 1, "method": "initialize", "params": {"processId": null, '
                   f'"rootUri": null, "capabilities": {{}}, "initializationOptions": {DEEP}}}'))
    msg = raw.expect(id=1)
    assert msg.get("error", {}).get("code") == -32602, msg
    assert "initializationOptions" in msg["error"]["message"], msg
    assert "64 levels" in msg["error"]["message"], msg
    raw.answers(2)  # the server answers on
    _no_traceback(raw)


def _initialized(raw: RawServer, ws: Path, pull: bool) -> None:
    caps = {"workspace": {"configuration": True}} if pull else {}
    raw.send(request(1, "initialize", {
        "processId": None, "capabilities": caps,
        "workspaceFolders": [{"uri": ws.as_uri(), "name": "ws"}]}))
    raw.expect(id=1)
    raw.send(frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))


def test_pushed_settings_nested_900_deep_keep_the_previous_ones(
        raw: RawServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _initialized(raw, ws, pull=False)
    raw.send(_body('"method": "workspace/didChangeConfiguration", '
                   f'"params": {{"settings": {DEEP}}}'))
    raw.send(request(2, "turnback/status", {"workspace": ws.as_uri()}))
    msg = raw.expect(id=2)
    assert "error" not in msg, msg
    assert "param 'settings' is nested deeper than 64 levels" in raw.stderr()
    _no_traceback(raw)


def test_a_configuration_answer_nested_900_deep_leaves_its_folder_working(
        raw: RawServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _initialized(raw, ws, pull=True)
    asked = raw.expect(method="workspace/configuration")
    raw.send(_body(f'"id": {json.dumps(asked["id"])}, "result": [{DEEP}]'))
    raw.send(request(2, "turnback/status", {"workspace": ws.as_uri()}))
    msg = raw.expect(id=2)
    assert "error" not in msg, msg
    assert "is nested deeper than 64 levels" in raw.stderr()
    _no_traceback(raw)
