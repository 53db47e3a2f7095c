"""JSON-RPC messages cut from stdin and checked before pygls sees them.

pygls's loop (``pygls.io_.run_async``) dropped, unanswered, every message it could not
read: a body that is not JSON, JSON that is not a request, a frame without a usable
``Content-Length``; and it waited for (and held) whatever length a header named, 10^12
bytes included. This loop answers what JSON-RPC 2.0 says (-32700 for a body that is not
JSON, -32600 for JSON that is not a request object, both with ``id`` null unless a usable
id was read) and keeps every frame within ``MAX_BODY`` (docs/PROTOCOL.md, "Framing").

Batches (a JSON array) are refused whole with one -32600: LSP has none, the editor's
client (vscode-jsonrpc) never sends one, and answering one means holding every answer of
the batch until its slowest (a rewind) is done, which pygls's per-message answers do not.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from typing import Any, Protocol

from pygls.exceptions import JsonRpcException

from .stdin import StdinReader

log = logging.getLogger("turnback_transport")

# The largest message the extension sends is turnback/blame with the editor's unsaved text:
# 8 Mi characters (features/blame.MAX_TEXT), at most 6 bytes each in JSON ("\u0001"), 48 MiB.
MAX_BODY = 64 * 2**20
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_SHOWN = 80  # bytes of a refused body quoted in the log

# "Content-Length: N" ending a line that does not start as a header: the tail of a body
# longer than its length said, or of a frame refused without one, and the next frame's start
_LENGTH_AT_END = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n:]{0,40}?)[ \t]*\r?\n\Z", re.I)
# a header's name and colon; the value is what follows, stripped (no pattern over the value:
# a lazy one backtracked over each run of blanks from each of its bytes, O(n^2) in a line)
_NAME = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:")


class Messages(Protocol):
    """What the loop uses of the protocol (``wire.TurnbackProtocol``)."""

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def handle_message(self, message: Any) -> None: ...

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None: ...


async def serve(stop: threading.Event, reader: StdinReader, protocol: Messages) -> None:
    """Read, check and hand on messages until stdin ends or ``stop`` is set (``exit``)."""
    while not stop.is_set():
        body = await _next_body(reader, protocol)
        if body is None:
            return
        _dispatch(body, protocol)


async def _next_body(reader: StdinReader, protocol: Messages) -> bytes | None:
    """The next frame's body; None at the end of stdin. A frame refused at its headers is
    answered here, and its body skipped (a length too big) or dropped as lines that are not
    headers (no usable length: the next ``Content-Length`` line ends them)."""
    while True:
        n = await _next_length(reader, protocol)
        if n is None:
            return None
        if n < 0:
            continue  # refused at its headers, answered
        if n > MAX_BODY:
            _refuse(protocol, None, INVALID_REQUEST,
                    f"a message of {n} bytes (its Content-Length) is past the server's limit "
                    f"of {MAX_BODY} bytes; it is skipped unread: send smaller requests")
            skipped = await reader.skip(n)
            log.info("skipped %d bytes of the refused message", skipped)
            if skipped < n:
                return None
            continue
        body = await reader.readexactly(n)
        if len(body) < n:
            log.warning("stdin ended %d bytes into a message of %d", len(body), n)
            return None
        return body


async def _next_length(reader: StdinReader, protocol: Messages) -> int | None:
    """The next frame's headers read: its length; -1 when refused (answered); None at the
    end of stdin. Lines that are not headers between frames are dropped (logged)."""
    lengths: list[bytes] = []  # the first value only; ``count`` counts them all
    count = 0
    in_headers = False
    junk = 0
    while True:
        tail: re.Match[bytes] | None = None
        line = await reader.readline()
        if not line:
            if line is not None:  # b"": the end
                if junk:
                    log.warning("dropped %d line(s) that were not message headers before "
                                "stdin ended", junk)
                return None
        elif not line.strip(b"\r\n"):
            if in_headers:
                break
            continue  # blank lines between messages
        else:
            header = _header(line)
            if header is not None and header[0] == b"content-length":
                in_headers = True
                count += 1
                if not lengths:  # a frame of a million such lines holds one
                    lengths.append(header[1])
                continue
            tail = _LENGTH_AT_END.search(line, max(0, len(line) - 200))
            if header is not None and tail is None:
                in_headers = True  # another header (Content-Type): not needed
                continue
        # not a header: a line past the limit (None), the tail of a body longer than its
        # length said, a refused frame's body, or noise
        junk += 1
        if in_headers:
            _refuse(protocol, None, PARSE_ERROR, "the message's headers could not be read: "
                    "a line that is not a header before the blank line ending them")
        if tail is not None:  # what comes before it is not a header: a new frame starts
            in_headers, lengths, count = True, [tail.group(1)], 1
        else:
            in_headers, lengths, count = False, [], 0
    if junk:
        log.warning("dropped %d line(s) that were not message headers (the client's "
                    "framing is broken) before the next message", junk)
    n = _length(lengths, count)
    if isinstance(n, str):
        _refuse(protocol, None, PARSE_ERROR, f"the message's headers could not be read: {n}; "
                "it was dropped (its body is read as stray lines up to the next "
                "'Content-Length' header)")
        return -1
    return n


def _header(line: bytes) -> tuple[bytes, bytes] | None:
    """A header line's name, lower-cased, and its value; None for a line that is not one.
    Linear in the line: a name pattern anchored at its start, then a strip."""
    if not line.endswith(b"\n"):
        return None
    name = _NAME.match(line)
    if name is None:
        return None
    return name.group(1).lower(), line[name.end():].strip(b" \t\r\n")


def _length(values: list[bytes], count: int) -> int | str:
    """The frame's one ``Content-Length`` (``values``: the first of ``count``); what is
    wrong with it, as text, if not usable."""
    if not values:
        return "no Content-Length header"
    if count > 1:
        return f"Content-Length given {count} times"
    value = values[0].strip()
    if not value.isdigit() or len(value) > 20:
        return f"Content-Length {value[:40].decode('latin-1')!r} is not a byte count"
    return int(value)


def _dispatch(body: bytes, protocol: Messages) -> None:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep, 10^4300
        _refuse(protocol, None, PARSE_ERROR,
                f"the message body is not JSON ({_why(exc)}): {_shown(body)}")
        return
    if isinstance(doc, list):
        _refuse(protocol, None, INVALID_REQUEST,
                "an empty batch (a JSON array)" if not doc else
                f"a batch of {len(doc)} messages: this server takes no batches (LSP has "
                "none); send each request in its own message; none of them was run")
        return
    if not isinstance(doc, dict):
        _refuse(protocol, None, INVALID_REQUEST,
                f"not a request object but a JSON {_kind(doc)}: {_shown(body)}")
        return
    msg_id = doc.get("id")
    usable_id = msg_id if _usable_id(msg_id) else None
    if doc.get("jsonrpc") != "2.0":
        wrong = f"'jsonrpc' is {doc.get('jsonrpc')!r}, not '2.0'"
        if "method" in doc or not _is_response(doc):
            _refuse(protocol, usable_id, INVALID_REQUEST, f"not a JSON-RPC 2.0 request: {wrong}")
        else:
            log.warning("dropped a response that is not JSON-RPC 2.0 (%s)", wrong)
        return
    if "method" in doc:
        method = doc["method"]
        if not isinstance(method, str):
            _refuse(protocol, usable_id, INVALID_REQUEST,
                    f"'method' is a JSON {_kind(method)}, not a string")
            return
        if "id" in doc and not _usable_id(msg_id):
            _refuse(protocol, None, INVALID_REQUEST,
                    f"{method}: 'id' is a JSON {_kind(msg_id)}; a request's id is a string "
                    "or a number")
            return
    elif not _is_response(doc):
        _refuse(protocol, usable_id, INVALID_REQUEST,
                "an object with neither 'method' (a request) nor 'id' and 'result' or 'error' "
                f"(a response): {_shown(body)}")
        return
    try:
        message = protocol.structure_message(doc)
    except JsonRpcException as exc:
        # params that do not fit an LSP method's type (pygls's converter refused them)
        method = doc.get("method")
        if "id" in doc and isinstance(method, str):
            _refuse(protocol, usable_id, INVALID_PARAMS,
                    f"{method}: the params do not fit the method's type ({exc.message})")
        else:
            log.warning("dropped a message pygls could not read (%s): %s", exc.message,
                        _shown(body))
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("handling a message failed")


def _refuse(protocol: Messages, msg_id: int | str | None, code: int, why: str) -> None:
    """Answer what could not be taken, and log it (once: one line, no traceback)."""
    log.warning("refused a message (%d): %s", code, why)
    protocol.send_error(msg_id, code, why)


def _usable_id(value: Any) -> bool:
    """JSON-RPC's ids: a string, a number or null (a bool is not a number here, nor 1e400,
    read as infinity: an answer would carry it as ``Infinity``, which is not JSON)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def _is_response(doc: dict[str, Any]) -> bool:
    return "id" in doc and ("result" in doc or "error" in doc)


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    if isinstance(value, float) and not math.isfinite(value):
        return "number past a float's range"
    return names.get(type(value), "number")


def _why(exc: BaseException) -> str:
    return "nested too deep" if isinstance(exc, RecursionError) else str(exc)[:200]


def _shown(body: bytes) -> str:
    head = body[:_SHOWN].decode("utf-8", "replace")
    return repr(head) + (f" … ({len(body)} bytes)" if len(body) > _SHOWN else "")
