"""``checkpoint``, ``checkpoints``, ``changes``, ``diff``, ``show``."""

from __future__ import annotations

import sys

import click

from ..errors import NotFound
from ..fs.paths import one_line, quote
from ..interchange import cli_text
from ..store.safety_names import checkpoint_json, words
from .common import Ctx, emit, pass_ctx, print_out, progress_bar
from .times import local_time


@click.command("checkpoint")
@click.option("-m", "--label", default=None, help="A label for the checkpoint.")
@click.option("--session", "session_id", default=None, envvar="TURNBACK_SESSION",
              help="Session to attach it to (default: $TURNBACK_SESSION, else the workspace "
              "session).")
@click.option("--auto", is_flag=True, help="Mark it automatic (retention may drop it).")
@pass_ctx
def checkpoint(ctx: Ctx, label: str | None, session_id: str | None, auto: bool) -> None:
    """Checkpoint every file of the workspace (minus ignores)."""
    store = ctx.open(create=True, merge_logs=True)
    with progress_bar("checkpoint") as bar:
        cp = store.checkpoint(label=label, session_id=session_id, auto=auto, progress=bar)
    store.close()
    print_out(cli_text.checkpoint(cp.to_json(), ctx.as_json))


@click.command("checkpoints")
@click.option("--session", "session_id", default=None)
@pass_ctx
def checkpoints(ctx: Ctx, session_id: str | None) -> None:
    """List checkpoints, oldest first."""
    store = ctx.open()
    items = store.checkpoints(session_id)
    if store.index.repaired:  # on stderr: the listing on stdout stays what scripts read
        click.echo(f"turnback: {store.index.path} was damaged (lines unreadable or lost): "
                   f"{store.index.repaired} checkpoint record(s) put back from the object "
                   "logs that hold them; 'turnback fsck' lists the damaged lines", err=True)

    # a safety checkpoint's label names a checkpoint by id: said in words instead
    by_id = {c.id: c for c in (items if session_id is None else store.checkpoints(None))}

    def human() -> None:
        for c in items:
            flags = ("auto " if c.auto else "") + ("partial" if c.partial else "")
            label = one_line(words(c, by_id))
            click.echo(f"{c.id}  {local_time(c.ts)}  {c.files:>6} files  {flags:<12} {label}")

    # as the server's turnback/checkpoints answers: safetyOf with its words, only where it
    # counts (a pulled checkpoint's stored field named another machine's operation)
    emit(ctx, {"checkpoints": [checkpoint_json(c, by_id) for c in items]}, human)


@click.command("changes")
@click.argument("a")
@click.argument("b", required=False)
@pass_ctx
def changes(ctx: Ctx, a: str, b: str | None) -> None:
    """Files changed from checkpoint A to B (default: the working tree)."""
    store = ctx.open()
    items = store.changes(a, b)
    letter = {"added": "A", "modified": "M", "deleted": "D"}

    def human() -> None:
        for c in items:
            counts = "binary" if c.binary else f"+{c.lines_added} -{c.lines_removed}"
            click.echo(f"{letter[c.status]} {quote(c.path)}  {counts}")

    emit(ctx, {"changes": [c.to_json() for c in items]}, human)


@click.command("diff")
@click.argument("a")
@click.argument("b", required=False)
@click.argument("path", required=False)
@pass_ctx
def diff(ctx: Ctx, a: str, b: str | None, path: str | None) -> None:
    """Unified diff from checkpoint A to B (or the working tree), optionally of one PATH.

    With two arguments, the second is taken as a checkpoint if one matches, else as PATH.
    """
    store = ctx.open()
    if b is not None and path is None:
        try:
            store.resolve_checkpoint(b)
        except NotFound:
            b, path = None, b
    text = store.diff(a, b, path)
    emit(ctx, {"diff": text}, lambda: click.echo(text, nl=False))


@click.command("show")
@click.argument("checkpoint")
@click.argument("path")
@pass_ctx
def show(ctx: Ctx, checkpoint: str, path: str) -> None:
    """Print PATH's content at CHECKPOINT (bytes as stored)."""
    store = ctx.open()
    if ctx.as_json:
        emit(ctx, store.file_content(checkpoint, path).to_json())
        return
    data = store.read_file(checkpoint, path)
    if data is None:
        name = quote(path)  # "a\nb" if it must be quoted, else 'a' as before
        raise NotFound(f"{name if name.startswith(chr(34)) else repr(name)} does not exist "
                       f"in checkpoint {checkpoint}")
    sys.stdout.buffer.write(data)
