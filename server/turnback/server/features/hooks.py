"""turnback/hooks: install, remove or list agents' own hooks for a folder (the palette command).

The same operations as ``turnback hooks install|uninstall|status`` (importers/hooks.py):
the editor's command only asks, the server writes the agent's configuration.
"""

from __future__ import annotations

from typing import Any

from ..core import TurnbackServer
from ..jobs.work import run_blocking
from ..rpc import methods
from ..rpc.errors import rpc_method
from ..rpc.params import Params

JSON = dict[str, Any]
ACTIONS = ("status", "install", "uninstall")


def register(ls: TurnbackServer) -> None:
    @ls.feature(methods.HOOKS)
    @rpc_method(methods.HOOKS)
    async def hooks_(ls: TurnbackServer, params: Any) -> JSON:
        from ...errors import InvalidInput
        from ...importers import hooks

        p = Params(params, methods.HOOKS)
        action = p.choice("action", ACTIONS, "status")
        agent = p.choice("agent", ("", *hooks.SPECS), "")
        folder = await ls.folder(p.string("folder"), methods.HOOKS)
        if action != "status" and folder.settings.read_only:
            raise InvalidInput(f"{methods.HOOKS}: the workspace is not trusted; "
                               "Turnback writes no agent configuration in it")
        agents = [agent] if agent else list(hooks.SPECS)

        def job() -> JSON:
            changed: dict[str, bool] = {}
            for a in agents:
                if action == "install":
                    changed[a] = hooks.install(folder.path, a)
                elif action == "uninstall":
                    changed[a] = hooks.uninstall(folder.path, a)
            states = [hooks.status(folder.path, a).to_json() for a in agents]
            return {"hooks": states, "changed": changed}

        out = await run_blocking(ls.pools.writes, job)
        out["folder"] = folder.uri
        return out
