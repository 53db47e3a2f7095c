"""``turnback push [REMOTE]``: this machine's sessions and checkpoints to a git remote."""

from __future__ import annotations

import click

from ..sharing.operations import delete, push
from .common import Ctx, emit, pass_ctx


@click.command("push")
@click.argument("remote", required=False, metavar="[REMOTE]")
@click.option("-n", "--dry-run", is_flag=True,
              help="Say what would be sent, how many bytes, and what is redacted; send nothing.")
@click.option("--forget", "forget", multiple=True, metavar="SESSION",
              help="Never push SESSION (and its checkpoints) again, and replace this machine's "
                   "history on the remote by one without it. Repeatable.")
@click.option("--delete", "delete_all", is_flag=True,
              help="Delete this machine's whole history from the remote (a later push sends "
                   "it again).")
@pass_ctx
def push_cmd(ctx: Ctx, remote: str | None, dry_run: bool, forget: tuple[str, ...],
             delete_all: bool) -> None:
    """Push history to REMOTE (a remote name or git URL; default: the history remote set
    with 'turnback remote --set', else origin) under refs/turnback/<this machine>.
    Secrets are redacted first; see docs/SHARING.md."""
    if delete_all and (forget or dry_run):
        raise click.UsageError("--delete takes neither --forget nor --dry-run")
    store = ctx.open()
    try:
        if delete_all:
            gone = delete(store, remote)
        else:
            result = push(store, remote, dry_run=dry_run, forget=list(forget))
    finally:
        store.close()
    if delete_all:
        emit(ctx, gone, lambda: click.echo(
            f"deleted {gone['ref']} from {gone['url']}" if gone["deleted"]
            else f"{gone['url']} has no {gone['ref']}"))
        return

    def human() -> None:
        for r in result["redactions"]:
            click.echo(f"redacted {r['kind']} in {r['where']} (line {r['line']})")
        verb = "would send" if dry_run else "sent"
        if result["replaces"] and not result["upToDate"]:
            click.echo(f"replacing {result['ref']} on {result['url']}: without "
                       f"{', '.join(result['forgotten'])}")
        if result["upToDate"]:
            click.echo(f"{result['url']} {result['ref']} is up to date")
        else:
            size = "?" if result["bytes"] is None else f"{result['bytes']:,}"
            click.echo(f"{verb} {result['sessions']} sessions, {result['checkpoints']} "
                       f"checkpoints: {result['objects']} new objects, {size} "
                       f"bytes to {result['url']} {result['ref']}")

    emit(ctx, result, human)
