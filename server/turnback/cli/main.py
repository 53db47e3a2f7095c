"""Entry point: ``turnback [-C DIR] [--store DIR] [--json] VERB ...``."""

from __future__ import annotations

import click

from . import checkpoint_cmd, maintenance_cmd, rewind_cmd, sessions_cmd
from .common import Ctx, TurnbackGroup


@click.group(cls=TurnbackGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "--workspace", default=None, metavar="DIR",
              help="The workspace (default: the nearest folder upward with a store, else .).")
@click.option("--store", "store_dir", default=None, metavar="DIR", envvar="TURNBACK_STORE",
              help="The store folder (default: WORKSPACE/.turnback).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.version_option(package_name="turnback")
@click.pass_context
def cli(ctx: click.Context, workspace: str | None, store_dir: str | None, as_json: bool) -> None:
    """Turnback: see what an agent did in this workspace, and turn any of it back."""
    ctx.obj = Ctx(workspace, store_dir, as_json)


for command in (
    maintenance_cmd.init,
    maintenance_cmd.status,
    sessions_cmd.session_group,
    sessions_cmd.record,
    sessions_cmd.fork,
    sessions_cmd.oplog,
    checkpoint_cmd.checkpoint,
    checkpoint_cmd.checkpoints,
    checkpoint_cmd.changes,
    checkpoint_cmd.diff,
    checkpoint_cmd.show,
    rewind_cmd.rewind,
    rewind_cmd.undo,
    maintenance_cmd.gc,
    maintenance_cmd.fsck,
):
    cli.add_command(command)


def _optional_commands() -> None:
    """Commands whose modules come with their features (import, export, serve)."""
    import importlib

    for module, attr in (("import_cmd", "import_cmd"), ("export_cmd", "export_cmd"),
                         ("serve_cmd", "serve_cmd")):
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise
            continue
        cli.add_command(getattr(mod, attr))


_optional_commands()


def main() -> None:
    cli(prog_name="turnback")


if __name__ == "__main__":
    main()
