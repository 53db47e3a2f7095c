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


def _change(ctx: Ctx, agent: str | None, install: bool) -> None:
    """Install or uninstall for AGENT (or every agent with hooks) and say what changed."""
    from ..importers import hooks

    ws = ctx.find_workspace()
    op = hooks.install if install else hooks.uninstall
    done = {a: op(ws, a) for a in _agents(agent)}
    yes, no = ("installed in", "already in") if install else ("removed from", "none in")
    notes = {a: hooks.status(ws, a).note for a in done} if install else {}
    emit(ctx, {"installed" if install else "removed": done}, "\n".join(
        f"{a}: {yes if changed else no} {hooks.spec(a).file}"
        + (f"; {notes[a]}" if notes.get(a) else "") for a, changed in done.items()))


@hooks_cmd.command("install")
@click.argument("agent", required=False)
@pass_ctx
def install(ctx: Ctx, agent: str | None) -> None:
    """Write AGENT's hook configuration here (every agent with hooks if none is named)."""
    _change(ctx, agent, install=True)


@hooks_cmd.command("uninstall")
@click.argument("agent", required=False)
@pass_ctx
def uninstall(ctx: Ctx, agent: str | None) -> None:
    """Remove exactly the hooks Turnback added (the user's own stay)."""
    _change(ctx, agent, install=False)


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
