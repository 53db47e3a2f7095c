"""``turnback pull [REMOTE]``: other machines' history, read-only, never into the workspace."""

from __future__ import annotations

import click

from ..fs.paths import one_line
from ..sharing.operations import pull
from .common import Ctx, emit, pass_ctx


@click.command("pull")
@click.argument("remote", required=False, metavar="[REMOTE]")
@pass_ctx
def pull_cmd(ctx: Ctx, remote: str | None) -> None:
    """Pull every other machine's sessions and checkpoints from REMOTE into the store.
    The workspace is not touched; rewind to a pulled checkpoint by its id (undoable)."""
    store = ctx.open(create=True)
    try:
        result = pull(store, remote)
    finally:
        store.close()

    def human() -> None:
        if not result["machines"]:
            click.echo(f"no other machine's history at {result['url']}")
        for m in result["machines"]:
            # user, host and the reasons quote what another machine wrote: escaped, so a
            # pushed manifest or tree name cannot drive the terminal
            who = one_line(f"{m['machine']} ({m['user']}@{m['host']})" if m["user"]
                           else m["machine"])
            if m["refused"]:
                click.echo(f"refused {who}: {one_line(m['refused'])}", err=True)
            else:
                click.echo(f"{who}: {m['checkpoints']} new checkpoints, {m['events']} new "
                           f"events in {m['sessions']} sessions")

    emit(ctx, result, human)
    if any(m["refused"] for m in result["machines"]):
        ctx_exit = click.get_current_context()
        ctx_exit.exit(1)
