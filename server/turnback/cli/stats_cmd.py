"""``turnback stats --by-agent [--since DATE]``: lines added and removed per agent and by people."""

from __future__ import annotations

from datetime import datetime, timezone

import click

from ..attribution.history import load_history
from ..attribution.stats import by_author
from ..errors import InvalidInput
from ..fs.paths import one_line
from .common import Ctx, emit, pass_ctx


def _since(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"--since {text!r} is not a date: give one as 2026-11-20 or "
                           "2026-11-20T14:00") from None
    if when.tzinfo is None:
        when = when.astimezone()  # the user's own zone, as they typed it
    return when.astimezone(timezone.utc).timestamp()


@click.command("stats")
@click.option("--by-agent", is_flag=True, default=True,
              help="Per agent and by people (the only grouping so far, and the default).")
@click.option("--since", default=None, metavar="DATE",
              help="Only changes checkpointed at or after DATE (ISO 8601; local time if no zone).")
@pass_ctx
def stats_cmd(ctx: Ctx, by_agent: bool, since: str | None) -> None:
    """Lines added and removed in this folder per agent, and by people between turns."""
    after = _since(since)
    store = ctx.open()
    try:
        rows = by_author(store, load_history(store), after)
    finally:
        store.close()

    def human() -> None:
        if not rows:
            click.echo("no changes recorded" + (f" since {since}" if since else ""))
        for r in rows:
            unit = "steps" if r.author == "people" else "turns"
            click.echo(f"{one_line(r.author):<24} +{r.added:<8} -{r.removed:<8} "
                       f"{r.files} file changes in {r.turns} {unit}")

    emit(ctx, {"since": since, "byAgent": [r.to_json() for r in rows]}, human)
