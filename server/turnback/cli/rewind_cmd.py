"""``rewind`` and ``undo``."""

from __future__ import annotations

import click

from ..fs.paths import quote
from ..models import RewindResult
from .common import Ctx, emit, pass_ctx


def _report(ctx: Ctx, res: RewindResult, verb: str) -> None:
    def human() -> None:
        pre = "would " if res.dry_run else ""
        if res.mode != "conversation":
            for p in res.written:
                click.echo(f"{pre}overwrite {quote(p)}")
            for p in res.created:
                click.echo(f"{pre}create    {quote(p)}")
            for p in res.removed:
                click.echo(f"{pre}delete    {quote(p)}")
            n = len(res.written) + len(res.created) + len(res.removed)
            click.echo(f"{verb}: {n} file(s)" + ("" if res.dry_run else
                       f"; safety checkpoint {res.safety_checkpoint} (undo with 'turnback undo')"))
        if res.head:
            click.echo(f"session head: {res.head}")

    emit(ctx, res.to_json(), human)


@click.command("rewind")
@click.argument("checkpoint")
@click.argument("paths", nargs=-1)
@click.option("--mode", type=click.Choice(["files", "conversation", "both"]), default="files",
              show_default=True, help="Rewind the files, the conversation head, or both.")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@pass_ctx
def rewind(ctx: Ctx, checkpoint: str, paths: tuple[str, ...], mode: str, dry_run: bool) -> None:
    """Make the workspace (all files, or PATHS) equal to CHECKPOINT. A safety checkpoint is
    taken first, so 'turnback undo' reverts it."""
    store = ctx.open()
    res = store.rewind(checkpoint, list(paths) or None, mode, dry_run)
    _report(ctx, res, "rewind" if not dry_run else "dry run")


@click.command("undo")
@click.option("--dry-run", is_flag=True)
@pass_ctx
def undo(ctx: Ctx, dry_run: bool) -> None:
    """Revert the last rewind (or undo: undo twice is redo)."""
    store = ctx.open()
    _report(ctx, store.undo(dry_run), "undo")
