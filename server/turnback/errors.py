"""Errors that name the thing that is wrong and what to do about it.

Each class carries the JSON-RPC error code the language server answers with, so
the server maps errors by class and never by parsing messages.
"""

from __future__ import annotations


class TurnbackError(Exception):
    """Base of every error Turnback raises on purpose."""

    code = -32603  # JSON-RPC internal error; subclasses narrow it.

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(TurnbackError):
    """A parameter, argument or input file is malformed; the message names the field."""

    code = -32602


class NotFound(TurnbackError):
    """A session, event, checkpoint, object or path does not exist."""

    code = -32001


class Conflict(TurnbackError):
    """The operation clashes with the current state (e.g. nothing to undo)."""

    code = -32002


class StoreDamaged(TurnbackError):
    """Stored data is unreadable: a torn object, a bad index, an unknown format version."""

    code = -32003


class Unsafe(TurnbackError):
    """Refused because it would touch something outside the workspace."""

    code = -32004
