"""``turnback export SESSION``: a session as Turnback JSONL or a Markdown transcript."""

from __future__ import annotations

import io
import sys

import click

from ..fs.atomic import atomic_write
from ..fs.leftovers import remove_leftovers_at
from ..fs.paths import expand_home, quote
from ..interchange.export import export_jsonl, export_markdown
from .common import Ctx, emit, pass_ctx


@click.command("export")
@click.argument("session_id", metavar="SESSION")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl",
              show_default=True,
              help="jsonl: Turnback's own format ('turnback import turnback FILE' reads it back); "
              "markdown: a transcript to read.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write to FILE (replaced whole, atomically) instead of stdout.")
@pass_ctx
def export_cmd(ctx: Ctx, session_id: str, fmt: str, output: str | None) -> None:
    """Export SESSION: its header and every event, or a readable transcript."""
    store = ctx.open()
    buf = io.BytesIO()
    try:
        if fmt == "jsonl":
            count = export_jsonl(store, session_id, buf)
        else:
            text = io.StringIO()
            count = export_markdown(store, session_id, text)
            # a name that is not UTF-8 (a lone surrogate) shown as its escape, \\udcXX
            buf.write(text.getvalue().encode("utf-8", "backslashreplace"))
    finally:
        store.close()
    data = buf.getvalue()
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = expand_home(output)
    # a file the user asked for, outside the store: the usual modes (umask applies)
    atomic_write(target, data, fsync=True, mode=0o644, private_dirs=False)
    remove_leftovers_at(target)  # an earlier export's, killed before its rename
    if ctx.as_json:  # through orjson: a file name holding '"' or a newline stays valid JSON
        emit(ctx, {"session": session_id, "file": str(target), "events": count})
    else:
        click.echo(f"wrote {count} events of {session_id} to {quote(str(target))}", err=True)
