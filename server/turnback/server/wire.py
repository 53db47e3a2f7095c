"""How JSON-RPC messages of custom methods are decoded.

pygls hands the params of a method it has no type for to a hook that rebuilds
them as namedtuples, renaming keys that are not Python identifiers and dropping
a key called ``type_name``. Turnback's params (and the event data inside them)
are arbitrary JSON, so this converter keeps them as the plain dicts and lists
the JSON parser produced.
"""

from __future__ import annotations

from typing import Any

from cattrs import Converter
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)


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
