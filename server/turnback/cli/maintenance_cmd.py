"""``init``, ``status``, ``gc``, ``fsck``."""

from __future__ import annotations

import click

from ..fs.paths import one_line, quote
from ..interchange import cli_text
from ..store import background_lock, watchlimit
from .common import Ctx, emit, pass_ctx, print_out


@click.command("init")
@pass_ctx
def init(ctx: Ctx) -> None:
    """Create the store of this workspace (default: ./.turnback)."""
    store = ctx.open(create=True)
    emit(ctx, store.status(), f"Turnback store at {quote(str(store.root))}")


@click.command("status")
@pass_ctx
def status(ctx: Ctx) -> None:
    """Where the store is, what it holds and its disk usage."""
    store = ctx.open()
    # what a server or a hook's process found since (a rewind's journal emptied), once
    from .direct import tell_notices

    tell_notices(store, probe=True)
    st = store.status()
    # a running server that met the kernel's watch limit says so in the store
    limit = watchlimit.read_note(store.root)
    st["watchLimit"] = limit.to_json() if limit is not None else None
    st["background"] = background_lock.status(store.root)
    print_out(cli_text.status(st, ctx.as_json))


@click.command("gc")
@click.option("--dry-run", is_flag=True, help="Report what would be removed.")
@click.option("--keep-last", type=click.IntRange(min=0), default=None,
              help="Keep at least the newest N checkpoints; drop older ones.")
@click.option("--keep-days", type=click.FloatRange(min=0), default=None,
              help="Keep checkpoints newer than D days; drop older ones.")
@click.option("--quota", "quota_bytes", type=click.IntRange(min=0), default=None,
              help="Drop the oldest automatic checkpoints while objects exceed this many bytes.")
@pass_ctx
def gc(ctx: Ctx, dry_run: bool, keep_last: int | None, keep_days: float | None,
       quota_bytes: int | None) -> None:
    """Remove objects no checkpoint references (after applying retention)."""
    store = ctx.open()
    res = store.gc(dry_run, keep_last, keep_days, quota_bytes)
    verb = "would remove" if dry_run else "removed"
    emit(ctx, res.to_json(),
         f"{verb} {res.objects_removed} objects ({cli_text.size(res.bytes_freed)}); dropped "
         f"{len(res.checkpoints_dropped)} checkpoints; store now {cli_text.size(res.bytes_after)}")


@click.command("fsck")
@click.option("--repair", is_flag=True,
              help="First move the lines after the last record of each log whose appends "
                   "they refuse into a side file beside it (<name>.junk-<n>).")
@pass_ctx
def fsck(ctx: Ctx, repair: bool) -> None:
    """Check every object, checkpoint and session; say what is damaged. Exit 1 if any."""
    store = ctx.open()
    moved = store.repair_logs() if repair else []
    rep = store.fsck()

    def human() -> None:
        from ..fs.junk_tail import REPAIR_MOST

        for m in moved:
            if m.side:
                click.echo(f"moved {m.bytes} bytes after the last record of {one_line(m.file)} "
                           f"into {one_line(m.side)}")
            else:
                click.echo(f"cut the tail after the last record of {one_line(m.file)}")
            if m.dropped and m.spent:
                click.echo(f"  and dropped the {m.dropped} bytes after them: this repair's "
                           f"side files hold {REPAIR_MOST} bytes at most, spent on the "
                           "files above (lines Turnback writes are records, never a tail)")
            elif m.dropped:
                click.echo(f"  and dropped the {m.dropped} bytes after them: a tail that long "
                           "holds no line Turnback writes")
            if m.meta:
                click.echo(f"  {m.meta} 'meta' line(s) among them no longer apply (a session's "
                           "title or end they set); the side file is never read")
        click.echo(f"checked {rep.objects_checked} objects, {rep.checkpoints_checked} "
                   f"checkpoints, {rep.sessions_checked} sessions")
        for d in rep.damaged:
            click.echo(f"damaged {d['what']} {one_line(str(d['id']))}: "
                       f"{one_line(str(d['problem']))}\n  recoverable: {d['recoverable']}")
        click.echo("ok" if rep.ok else f"{len(rep.damaged)} problem(s)")

    emit(ctx, {**rep.to_json(), "setAside": [m.to_json() for m in moved]} if repair
         else rep.to_json(), human)
    if not rep.ok:
        raise SystemExit(1)
