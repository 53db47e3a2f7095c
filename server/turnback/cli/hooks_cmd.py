"""``turnback hooks install|uninstall|status [AGENT]``: agents' own hooks for this workspace."""

from __future__ import annotations

import click

from .common import Ctx, emit, pass_ctx


def _agents(agent: str | None) -> list[str]:
    from ..importers.hooks import SPECS, spec

    return [spec(agent).agent] if agent else list(SPECS)


@click.group("hooks")
def hooks_cmd() -> None:
    """Agents' own hooks: checkpoint at each prompt and turn end, the moment they happen."""


@hooks_cmd.command("install")
@click.argument("agent", required=False)
@pass_ctx
def install(ctx: Ctx, agent: str | None) -> None:
    """Write AGENT's hook configuration here (every agent with hooks if none is named)."""
    from ..importers import hooks

    ws = ctx.find_workspace()
    done = {a: hooks.install(ws, a) for a in _agents(agent)}
    emit(ctx, {"installed": done}, "\n".join(
        f"{a}: {'installed in' if new else 'already in'} {hooks.spec(a).file}"
        for a, new in done.items()))


@hooks_cmd.command("uninstall")
@click.argument("agent", required=False)
@pass_ctx
def uninstall(ctx: Ctx, agent: str | None) -> None:
    """Remove exactly the hooks Turnback added (the user's own stay)."""
    from ..importers import hooks

    ws = ctx.find_workspace()
    done = {a: hooks.uninstall(ws, a) for a in _agents(agent)}
    emit(ctx, {"removed": done}, "\n".join(
        f"{a}: {'removed from' if gone else 'none in'} {hooks.spec(a).file}"
        for a, gone in done.items()))


@hooks_cmd.command("status")
@click.argument("agent", required=False)
@pass_ctx
def status(ctx: Ctx, agent: str | None) -> None:
    """Which agents' Turnback hooks are installed here."""
    from ..importers import hooks

    ws = ctx.find_workspace()
    states = [hooks.status(ws, a) for a in _agents(agent)]
    emit(ctx, {"hooks": [s.to_json() for s in states]}, "\n".join(
        f"{s.agent}: {'installed' if s.installed else 'not installed'} ({s.file})"
        + (f"; {s.note}" if s.note else "") for s in states))
