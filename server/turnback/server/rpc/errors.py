"""Turn Turnback's errors into JSON-RPC errors, and keep the server alive.

Each ``turnback.errors`` class carries its JSON-RPC code, so mapping is by
class. pygls sends any ``JsonRpcException`` a handler raises as the response's
``error`` with that exception's code; everything else becomes -32603 with a
message that points at the server log, and the server keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcRequestCancelled

from ...errors import InvalidInput, NotFound, TurnbackError, Unsafe
from .progress import Cancelled

log = logging.getLogger("turnback.server")

S = TypeVar("S")
Handler = Callable[[S, Any], Awaitable[Any]]


def to_jsonrpc(exc: TurnbackError) -> JsonRpcException:
    """The JSON-RPC error a client receives for ``exc``; ``data.kind`` names its class."""
    return JsonRpcException(message=exc.message, code=exc.code, data={"kind": type(exc).__name__})


def internal_error(method: str, exc: BaseException) -> JsonRpcException:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return JsonRpcInternalError(
        message=f"{method} failed unexpectedly ({text}); the server log has the details",
        data={"kind": type(exc).__name__},
    )


def rpc_method(method: str) -> Callable[[Handler[S]], Handler[S]]:
    """Wrap a request handler so every failure is a JSON-RPC error with SPEC's code.

    Expected errors (bad params, unknown ids) are logged on one line; unexpected
    ones with their traceback, since they are bugs.
    """

    def wrap(fn: Handler[S]) -> Handler[S]:
        @functools.wraps(fn)
        async def handler(ls: S, params: Any) -> Any:
            try:
                return await fn(ls, params)
            except TurnbackError as exc:
                where = "" if exc.message.startswith(method) else f"{method}: "
                log.info("%s%s (%s)", where, exc.message, type(exc).__name__)
                raise to_jsonrpc(exc) from None
            except Cancelled:
                log.info("%s: cancelled by the client", method)
                message = f"{method}: cancelled by the client"
                raise JsonRpcRequestCancelled(message=message) from None
            except (JsonRpcException, asyncio.CancelledError):
                raise
            except Exception as exc:
                log.exception("%s failed", method)
                raise internal_error(method, exc) from None

        return handler

    return wrap


class QuietHandledErrors(logging.Filter):
    """Drop pygls's second report of an error a handler of ours already logged.

    pygls logs every error response with a traceback; ``rpc_method`` has already
    logged it (one line for a bad param, the traceback for a bug).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        handled = (
            info is not None
            and isinstance(info[1], JsonRpcException)
            and str(record.msg).startswith("Exception occurred for message")
        )
        return not handled


@contextlib.contextmanager
def about_param(method: str, name: str) -> Iterator[None]:
    """Prefix an error about a value with the param it came from: the client sent that value.

    Only errors about the value itself (malformed, unsafe, not found) are prefixed; a
    damaged store or a conflict while acting on a good value is not the param's fault.
    """
    try:
        yield
    except (InvalidInput, Unsafe, NotFound) as exc:
        if f"param '{name}'" in exc.message:
            raise
        raise type(exc)(f"{method}: param '{name}': {exc.message}") from exc
