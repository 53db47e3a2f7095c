"""``turnback trace export [COMMIT]``: Agent Trace records of a git commit's lines."""

from __future__ import annotations

import click

from ..attribution.gitcommit import add_note, read_commit
from ..attribution.history import load_history
from ..attribution.trace import trace_record
from ..fs.paths import one_line, quote
from ..interchange import cli_text
from .common import Ctx, emit, pass_ctx


@click.group("trace")
def trace_cmd() -> None:
    """Agent Trace (agent-trace.dev): who wrote a commit's lines, as open records."""


@trace_cmd.command("export")
@click.argument("commit", default="HEAD")
@click.option("--note", is_flag=True,
              help="Also attach the record to the commit as a git note (refs/notes/agent-trace).")
@pass_ctx
def export(ctx: Ctx, commit: str, note: bool) -> None:
    """The attribution of the lines COMMIT (default HEAD) added, as an Agent Trace record."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mine = version("turnback")
    except PackageNotFoundError:
        mine = "0"
    store = ctx.open()
    try:
        found = read_commit(store.workspace, commit)
        record = trace_record(store, load_history(store), found, mine)
    finally:
        store.close()
    if note:
        add_note(store.workspace, found.sha, cli_text.json_text(record))

    def human() -> None:
        click.echo(f"commit {found.sha}")
        for f in record["files"]:
            parts = []
            for c in f["conversations"]:
                n = sum(r["end_line"] - r["start_line"] + 1 for r in c["ranges"])
                who = c["contributor"]["type"]
                model = c["contributor"].get("model_id")
                parts.append(f"{who}{' (' + one_line(model) + ')' if model else ''} {n}")
            click.echo(f"  {quote(f['path'])}: {', '.join(parts)}")
        if note:
            click.echo("attached as a git note (refs/notes/agent-trace)")

    emit(ctx, record, human)
