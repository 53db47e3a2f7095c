"""Logging: stderr always, and ``window/logMessage`` once a client is connected.

pygls logs every message it sends at INFO; that stays off unless
``TURNBACK_LOG=debug``, or the log would dwarf the traffic.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import TYPE_CHECKING

from lsprotocol import types

from .rpc.errors import QuietHandledErrors

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


class ClientLogHandler(logging.Handler):
    """Forwards ``turnback.*`` records to the client; safe from any thread."""

    def __init__(self, ls: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.INFO)
        self.ls = ls
        self.loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        try:
            level = next(t for lvl, t in _LEVELS.items() if record.levelno >= lvl)
        except StopIteration:
            level = types.MessageType.Log
        try:
            text = self.format(record)
            params = types.LogMessageParams(type=level, message=text)
            if self.loop.is_closed():
                return
            self.loop.call_soon_threadsafe(self._send, params)
        except Exception:
            self.handleError(record)

    def _send(self, params: types.LogMessageParams) -> None:
        try:
            self.ls.window_log_message(params)
        except Exception:  # a closed pipe while shutting down: stderr still has it
            pass


def setup_stderr() -> None:
    level_name = os.environ.get("TURNBACK_LOG", "info").upper()
    level = getattr(logging, level_name, logging.INFO)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(QuietHandledErrors())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("turnback").setLevel(level)
    logging.getLogger("pygls").setLevel(
        logging.DEBUG if level <= logging.DEBUG else logging.WARNING
    )


def attach_client(ls: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
    handler = ClientLogHandler(ls, loop)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logging.getLogger("turnback").addHandler(handler)


class BoundedFileHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A log file that never grows past ``limit`` bytes: past it, it starts over (the
    background server's, which lives on with nobody reading its stderr)."""

    def __init__(self, fd: int, limit: int) -> None:
        super().__init__(os.fdopen(fd, "a", encoding="utf-8", errors="replace"))
        self.fd = fd
        self.limit = limit

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if os.fstat(self.fd).st_size > self.limit:
                os.ftruncate(self.fd, 0)
        except OSError:
            pass
        super().emit(record)


def setup_file(fd: int, limit: int) -> None:
    """Log to the file open at ``fd`` (append) instead of stderr, as ``setup_stderr``."""
    setup_stderr()
    handler = BoundedFileHandler(fd, limit)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(QuietHandledErrors())
    logging.getLogger().handlers[:] = [handler]
