"""The command group: ``turnback [-C DIR] [--store DIR] [--json] VERB ...`` (run by ``main``)."""

from __future__ import annotations

import click

from . import checkpoint_cmd, maintenance_cmd, rewind_cmd, sessions_cmd
from .common import Ctx, TurnbackGroup
from .global_opts import accept_global_options

# Commands whose modules come with their features, imported only when one is run (or
# listed): ``import`` alone would load every importer on each ``turnback checkpoint``.
_OPTIONAL = {"import": "import_cmd", "export": "export_cmd", "serve": "serve_cmd",
             "hooks": "hooks_cmd", "hook": "hook_cmd",
             "continue": "continue_cmd",
             "push": "push_cmd", "pull": "pull_cmd", "remote": "remote_cmd",
             "blame": "blame_cmd", "trace": "trace_cmd",
             "stats": "stats_cmd"}


def _optional_command(name: str) -> click.Command | None:
    import importlib

    module = f"{__package__}.{_OPTIONAL[name]}"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None
    cmd = getattr(mod, _OPTIONAL[name])
    assert isinstance(cmd, click.Command)
    return cmd


class _Group(TurnbackGroup):
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in _OPTIONAL:
            cmd = _optional_command(cmd_name)
            if cmd is not None:
                accept_global_options(cmd)
                self.add_command(cmd)
        return cmd

    def list_commands(self, ctx: click.Context) -> list[str]:
        for name in _OPTIONAL:
            self.get_command(ctx, name)
        return super().list_commands(ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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
    accept_global_options(command)
    cli.add_command(command)
