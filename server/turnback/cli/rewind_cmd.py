"""``rewind`` and ``undo``."""

from __future__ import annotations

import click

from ..interchange import cli_text
from ..results import RewindResult
from .common import Ctx, pass_ctx, print_out


def _report(ctx: Ctx, res: RewindResult, verb: str) -> None:
    print_out(cli_text.rewind(res.to_json(), verb, ctx.as_json))


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
    store = ctx.open(merge_logs=True)
    res = store.rewind(checkpoint, list(paths) or None, mode, dry_run)
    _report(ctx, res, "rewind" if not dry_run else "dry run")


@click.command("undo")
@click.option("--dry-run", is_flag=True)
@pass_ctx
def undo(ctx: Ctx, dry_run: bool) -> None:
    """Revert the last rewind (or undo: undo twice is redo)."""
    store = ctx.open(merge_logs=True)
    _report(ctx, store.undo(dry_run), "undo")
