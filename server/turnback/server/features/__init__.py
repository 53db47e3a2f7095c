"""The server's methods, one module per group; ``register_all`` wires them in."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..app import TurnbackServer


def register_all(ls: TurnbackServer) -> None:
    from . import checkpoints, imports, lifecycle, maintenance, rewind, sessions

    for module in (lifecycle, maintenance, sessions, checkpoints, rewind, imports):
        module.register(ls)
