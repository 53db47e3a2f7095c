"""How JSON-RPC messages of custom methods are decoded.

pygls hands the params of a method it has no type for to a hook that rebuilds
them as namedtuples, renaming keys that are not Python identifiers and dropping
a key called ``type_name``. Turnback's params (and the event data inside them)
are arbitrary JSON, so this converter keeps them as the plain dicts and lists
the JSON parser produced.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import orjson
from cattrs import Converter
from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.json_rpc import RPCRequest

from ...fs.jsonl import bounded

logger = logging.getLogger("turnback_transport")
_traffic_log = logging.getLogger("pygls.protocol.json_rpc")  # TURNBACK_LOG=debug shows it


def _request(obj: dict[str, Any], _cls: type) -> JsonRPCRequestMessage:
    return JsonRPCRequestMessage(
        id=obj.get("id"),  # type: ignore[arg-type]
        method=str(obj.get("method", "")),
        jsonrpc=str(obj.get("jsonrpc", "")),
        params=obj.get("params"),
    )


def _notification(obj: dict[str, Any], _cls: type) -> JsonRPCNotification:
    return JsonRPCNotification(
        method=str(obj.get("method", "")),
        jsonrpc=str(obj.get("jsonrpc", "")),
        params=obj.get("params"),
    )


def _response(obj: dict[str, Any], _cls: type) -> JsonRPCResponseMessage:
    return JsonRPCResponseMessage(
        id=obj.get("id"),  # type: ignore[arg-type]
        jsonrpc=str(obj.get("jsonrpc", "")),
        result=obj.get("result"),
    )


def plain_json_converter() -> Converter:
    """pygls's converter, except that unknown methods' params and results stay plain JSON."""
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(JsonRPCRequestMessage, _request)
    converter.register_structure_hook(JsonRPCNotification, _notification)
    converter.register_structure_hook(JsonRPCResponseMessage, _response)
    return converter


class TurnbackProtocol(LanguageServerProtocol):
    """pygls's protocol, writing plain-JSON messages with orjson.

    pygls writes every message with ``json.dumps``, calling the cattrs converter
    for each attrs object inside. Turnback's answers are plain dicts and lists
    already, so a response to a custom method (and a notification with plain
    params) is written by orjson in one call. Anything else (LSP's typed
    answers, errors, values orjson refuses) goes the pygls way.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unanswered: set[int | str] = set()  # requests received, no answer written yet
        self._waiting: list[tuple[set[int | str], asyncio.Future[None]]] = []
        self._shutdown_id: int | str | None = None  # the id of the first ``shutdown``
        self._exiting: asyncio.Future[None] | None = None  # an ``exit`` held for its answer

    def handle_message(self, message: Any) -> None:
        """pygls's, except that a request after ``shutdown`` is answered, as LSP asks (pygls
        dropped it: its client waited for ever); ``shutdown`` asked again answers again."""
        if (self._shutdown and isinstance(message, RPCRequest)
                and message.jsonrpc == self.VERSION and message.method != types.EXIT):
            if message.method == types.SHUTDOWN:
                self._send_response(message.id, None)
            else:
                self._send_response(message.id, error=JsonRpcInvalidRequest(
                    f"{message.method}: the server is shutting down ('shutdown' was received); "
                    "only 'exit' is accepted now: start a new server"))
            return
        if (isinstance(message, RPCRequest) and message.method == types.SHUTDOWN
                and message.jsonrpc == self.VERSION):
            self._shutdown_id = message.id
        elif (getattr(message, "method", None) == types.EXIT and not self._shutdown
              and self._shutdown_id is not None and self._shutdown_id in self._unanswered):
            # ``shutdown`` closes the stores off the loop (it waits for a checkpoint under
            # way): an ``exit`` sent before its answer ends the process after it, as it did
            # when the close ran on the loop (else the close was cut and the code was 1)
            self._exiting = asyncio.ensure_future(
                self._after_answer(self._shutdown_id, message))
            return
        super().handle_message(message)

    async def _after_answer(self, msg_id: int | str, message: Any) -> None:
        """``message`` handled once the request ``msg_id`` is answered."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(({msg_id}, done))
        await done
        super().handle_message(message)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        self._unanswered.add(msg_id)
        super()._handle_request(msg_id, method_name, params)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        try:
            super()._send_response(msg_id, result, error)
        finally:
            self._unanswered.discard(msg_id)
            for ids, done in self._waiting:
                ids.discard(msg_id)
                if not ids and not done.done():
                    done.set_result(None)
            self._waiting = [w for w in self._waiting if w[0]]

    async def answered(self) -> None:
        """Until every request received so far has its answer written (a cancelled one
        and a failed one get theirs too): the server's own set-up that no request needs
        waits for this, so the first answers do not wait for it (features/lifecycle.py)."""
        if not self._unanswered:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((set(self._unanswered), done))
        await done

    def request_now(self) -> int | str | None:
        """The id of the request whose handler runs now (pygls's context), while its answer
        is still to be written; None outside a request's handler or once it is answered."""
        msg_id = self.msg_id
        return msg_id if msg_id is not None and msg_id in self._unanswered else None

    async def answered_one(self, msg_id: int | str) -> None:
        """Until request ``msg_id``'s answer is written (now, if it is already)."""
        if msg_id not in self._unanswered:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(({msg_id}, done))
        await done

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """An error answer written as JSON-RPC spells it, ``"id": null`` included (pygls's
        converter leaves a None out): the framing's answer to what it could not take."""
        msg = {"jsonrpc": self.VERSION, "id": msg_id, "error": {"code": code, "message": message}}
        if isinstance(self.writer, StdoutWriter) and self._include_headers:
            self._send_body(json.dumps(msg).encode("ascii"))  # \\u escapes: any text goes
        else:
            self._send_response(msg_id, error=ResponseError(code=code, message=message))

    def _stdout_closed(self) -> bool:
        """Whether the stream answers go to is closed: the server is exiting (``exit``
        closes it while a folder's work, cancelled, still ends its progress)."""
        out = getattr(self.writer, "_stdout", None)
        return bool(getattr(out, "closed", False))

    def _dropped(self, what: object) -> bool:
        """Whether a message is dropped as the stream is closed: pygls would log a
        traceback for its write and report an internal error to a client that is gone (a
        folder's progress ended by its work cancelled at ``exit``: redteam22's vscode
        client saw it under load); one line instead."""
        if not self._stdout_closed():
            return False
        logger.info("not sent, the server's stdout is closed (exiting): %s", what)
        return True

    def _send_data(self, data: Any) -> None:
        if self._dropped(getattr(data, "method", None) or "an answer"):
            return
        writer = self.writer
        body = _plain_body(data) if isinstance(writer, StdoutWriter) else None
        if body is None or not self._include_headers:
            super()._send_data(data)
            return
        self._send_body(body)

    def _send_body(self, body: bytes) -> None:
        if self._dropped("a message"):
            return
        writer = self.writer
        assert isinstance(writer, StdoutWriter)
        if _traffic_log.isEnabledFor(logging.INFO):
            _traffic_log.info("Sending data: %s", body.decode("utf-8", "replace"))
        header = (
            f"Content-Length: {len(body)}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        ).encode("ascii")
        try:
            writer.write(header + body)
        except BrokenPipeError:
            logger.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise
        except Exception as error:
            logger.exception("Error sending data", exc_info=True)
            self._server._report_server_error(error, JsonRpcInternalError)


_PLAIN = (dict, list, str, int, float, bool, type(None))


def _plain_body(data: Any) -> bytes | None:
    """The message as JSON bytes when it is plain JSON; None to let pygls write it."""
    cls = type(data)
    if cls is JsonRPCResponseMessage:
        if not isinstance(data.result, _PLAIN):
            return None
        msg: dict[str, Any] = {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
    elif cls is JsonRPCNotification:
        if not isinstance(data.params, (dict, type(None))):
            return None
        msg = {"method": data.method, "jsonrpc": data.jsonrpc}
        if data.params is not None:
            msg["params"] = data.params
    else:
        return None
    try:
        return orjson.dumps(msg)
    except (TypeError, orjson.JSONEncodeError):
        pass
    # nested past what orjson writes: a session line of a store from before the bound
    # (fs/jsonl.py), which pygls's json.dumps fails on too past ~1,000 levels (RecursionError:
    # the answer was never sent). Bounded as the store writes it; only after orjson refused
    bounded_msg = bounded(msg)
    if bounded_msg is msg:
        return None  # something json.dumps may still write (a huge int, a non-str key)
    try:
        return orjson.dumps(bounded_msg)
    except (TypeError, orjson.JSONEncodeError):
        return None
