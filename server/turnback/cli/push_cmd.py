"""``turnback push [REMOTE]``: this machine's sessions and checkpoints to a git remote."""

from __future__ import annotations

import click

from ..sharing.sharing import push
from .common import Ctx, emit, pass_ctx


@click.command("push")
@click.argument("remote", required=False, metavar="[REMOTE]")
@click.option("-n", "--dry-run", is_flag=True,
              help="Say what would be sent, how many bytes, and what is redacted; send nothing.")
@pass_ctx
def push_cmd(ctx: Ctx, remote: str | None, dry_run: bool) -> None:
    """Push history to REMOTE (a remote name or git URL; default: the history remote set
    with 'turnback remote --set', else origin) under refs/turnback/<this machine>.
    Secrets are redacted first; see docs/SHARING.md."""
    store = ctx.open()
    try:
        result = push(store, remote, dry_run=dry_run)
    finally:
        store.close()

    def human() -> None:
        for r in result["redactions"]:
            click.echo(f"redacted {r['kind']} in {r['where']} (line {r['line']})")
        verb = "would send" if dry_run else "sent"
        if result["upToDate"]:
            click.echo(f"{result['url']} {result['ref']} is up to date")
        else:
            click.echo(f"{verb} {result['sessions']} sessions, {result['checkpoints']} "
                       f"checkpoints: {result['objects']} new objects, {result['bytes']:,} "
                       f"bytes to {result['url']} {result['ref']}")

    emit(ctx, result, human)
