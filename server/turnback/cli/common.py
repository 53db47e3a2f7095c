"""What every CLI command shares: finding the store, printing, errors, progress."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import orjson

from ..errors import InvalidInput, TurnbackError
from ..interchange import cli_text
from ..store.config import STORE_DIRNAME
from ..store.facade import Store


@dataclass
class Ctx:
    workspace: str | None
    store_dir: str | None
    as_json: bool

    def find_workspace(self) -> Path:
        """``-C`` if given, else the nearest folder upward holding a store, else the cwd."""
        if self.workspace:
            return Path(self.workspace)
        cwd = Path.cwd()
        for d in (cwd, *cwd.parents):
            if (d / STORE_DIRNAME / "config.json").exists():
                return d
        return cwd

    def open(self, create: bool = False, merge_logs: bool = False) -> Store:
        """The store; ``merge_logs``: a command that may store objects, after which the
        object logs are merged if they are many (``direct.merge_logs_after``)."""
        from .direct import auto_init, tell_notices

        store = Store.open(self.find_workspace(), store_dir=self.store_dir,
                           create=create or auto_init())
        # a one-shot process: a full scan may fork a child to check folders on another core
        store.scanner.fork_verify = True
        tell_notices(store)
        # closed when the command ends, however it ends: close saves the summaries index and
        # the stat cache, and records a rewind whose journal is still open; the command's
        # output is printed (and flushed: click.echo) by then
        if merge_logs:
            from .direct import merge_logs_after

            def close() -> None:
                store.close()
                merge_logs_after(store)

            click.get_current_context().call_on_close(close)
        else:
            click.get_current_context().call_on_close(store.close)
        return store


pass_ctx = click.make_pass_decorator(Ctx)


def emit(ctx: Ctx, value: Any, human: Callable[[], None] | str | None = None) -> None:
    """Print JSON with ``--json``, else the human form."""
    if ctx.as_json:
        sys.stdout.write(cli_text.json_text(value))
        return
    if callable(human):
        human()
    elif isinstance(human, str):
        click.echo(human)


def print_out(printed: cli_text.Printed) -> None:
    """What ``cli_text`` made of a result (the same a server prints for a hand-off)."""
    out, err = printed
    if out:
        click.echo(out, nl=False)
    if err:
        click.echo(err, nl=False, err=True)


def parse_json_arg(text: str, what: str) -> dict[str, Any]:
    if text == "-":
        text = sys.stdin.read()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"{what} is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise InvalidInput(f"{what} must be a JSON object")
    return value


@contextmanager
def progress_bar(desc: str, unit: str = "file") -> Iterator[Callable[[int, int], None] | None]:
    """A tqdm bar on a terminal (stderr), nothing when output is piped.

    ``unit="B"`` counts bytes, shown scaled (kB, MB).
    """
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    bar: Any = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B",
                       file=sys.stderr, leave=False)
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        if bar is not None:
            bar.close()


class TurnbackGroup(click.Group):
    """Maps Turnback errors to a message on stderr and exit codes 1 (failed) / 2 (usage)."""

    def _verb(self, ctx: click.Context, rest: list[str]) -> str | None:
        """The command that ran, with its own subcommand (``session start``; ``rest``, the
        arguments after the command's name): named in a system error's message."""
        name = ctx.invoked_subcommand
        if name is None:
            return None
        if isinstance(self.get_command(ctx, name), click.Group):
            sub = next((a for a in rest if not a.startswith("-")), None)
            if sub is not None:
                return f"{name} {sub}"
        return name

    def invoke(self, ctx: click.Context) -> Any:
        rest = list(ctx.args)  # emptied by the invoke
        try:
            return super().invoke(ctx)
        except (TurnbackError, OSError) as exc:
            code, text = cli_text.error(exc, self._verb(ctx, rest)) or (1, str(exc))
            click.echo(text, err=True, nl=False)
            ctx.exit(code)
