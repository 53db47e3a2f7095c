"""``turnback blame PATH [--at CHECKPOINT]``: who wrote each line (docs/ATTRIBUTION.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from ..attribution import saved
from ..attribution.blame import Walker, blame_at, blame_now
from ..attribution.history import load_history
from ..attribution.origins import Origin
from ..fs.paths import one_line
from .common import Ctx, pass_ctx


def workspace_path(ctx: Ctx, path: str) -> str:
    """PATH as typed (relative to the current folder, or absolute) → workspace-relative;
    a path outside the workspace is passed on as it is (the store then names the problem)."""
    ws = ctx.find_workspace().resolve()
    p = Path(path)
    full = (p if p.is_absolute() else Path.cwd() / p).resolve()
    try:
        return full.relative_to(ws).as_posix()
    except ValueError:
        return path


def _when(o: Origin) -> str:
    ts = o.turns[0].end_ts if o.turns else (o.until or o.since or "")
    return ts[:16].replace("T", " ")


def _label(o: Origin) -> tuple[str, str]:
    """(who, what): the agent and the turn's prompt, or the kind of origin."""
    if o.turns:
        return o.who(), o.turns[0].prompt if len(o.turns) == 1 else "(turns open at once)"
    return o.kind, ""


@click.command("blame")
@click.argument("path")
@click.option("--at", "at", default=None, metavar="CHECKPOINT",
              help="Blame the file as checkpoint CHECKPOINT holds it (default: as it is now).")
@pass_ctx
def blame_cmd(ctx: Ctx, path: str, at: str | None) -> None:
    """Who wrote each line of PATH: the agent and turn, a person, or the first checkpoint."""
    rel = workspace_path(ctx, path)
    store = ctx.open()
    try:
        history = load_history(store)
        if at is None:
            # a walk saved by an earlier run, continued over the steps since, saved again
            walker = saved.load(store, history, rel) or Walker(store, rel)
            before = walker.state.position
            result = blame_now(store, history, rel, walker)
            if walker.state.position != before:
                saved.save(store, history, walker)
        else:
            result = blame_at(store, history, rel, at)
    finally:
        store.close()

    def human() -> None:
        width = len(str(len(result.lines)))
        for n, (line, o) in enumerate(zip(result.lines, result.origins, strict=True), 1):
            who, what = _label(o)
            text = line.decode("utf-8", "replace")
            click.echo(f"{one_line(who)[:14]:<14} {one_line(what)[:30]:<30} {_when(o):<16} "
                       f"{n:>{width}}) {one_line(text)}")

    if ctx.as_json:
        # plain JSON already: straight to orjson (json_text's walk over 5,000 lines' origins
        # for models to convert cost more than the blame)
        sys.stdout.write(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2).decode()
                         + "\n")
        return
    human()
