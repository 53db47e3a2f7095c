"""The server's methods, one module per group; ``register_all`` wires them in.

Each module imports the server's class from ``core.py`` and the helpers the
features share from the modules below (``lookup.py``, ``folders.py``), never
another feature module nor ``app.py``: the ``turnback-server-features``
contract in pyproject.toml keeps them independent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core import TurnbackServer


def register_all(ls: TurnbackServer) -> None:
    from . import (
        blame,
        checkpoints,
        history,
        hooks,
        imports,
        lifecycle,
        maintenance,
        rewind,
        sessions,
        sharing,
    )

    for module in (lifecycle, maintenance, sessions, checkpoints, rewind, imports, hooks, history,
                   sharing, blame):
        module.register(ls)
