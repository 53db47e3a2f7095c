"""``turnback remote``: where history is pushed and what each machine has there."""

from __future__ import annotations

import click

from ..sharing.operations import remote
from .common import Ctx, emit, pass_ctx


@click.command("remote")
@click.option("--set", "set_to", default=None, metavar="REMOTE",
              help="Push and pull history here (a remote name or URL) instead of origin.")
@click.option("--unset", is_flag=True, help="Forget the history remote: use origin again.")
@click.option("--offline", is_flag=True, help="Do not ask the remote what it holds.")
@pass_ctx
def remote_cmd(ctx: Ctx, set_to: str | None, unset: bool, offline: bool) -> None:
    """Show the history remote, this machine's id, and every machine's history there."""
    store = ctx.open(create=True)
    try:
        result = remote(store, set_to=set_to, unset=unset, look=not offline)
    finally:
        store.close()

    def human() -> None:
        click.echo(f"this machine: {result['machine']}")
        if result.get("url") is None:
            click.echo(result.get("problem", "no remote"))
            return
        click.echo(f"remote: {result['remote']} ({result['url']}, {result['why']})")
        for m in result.get("machines", []):
            tag = " (this machine)" if m["mine"] else " (pulled)" if m["pulled"] else ""
            click.echo(f"  refs/turnback/{m['machine']} {m['commit'][:12]}{tag}")

    emit(ctx, result, human)
