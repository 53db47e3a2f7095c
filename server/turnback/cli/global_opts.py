"""The group's options (``--json``, ``-C``, ``--store``) accepted after the verb too.

People type ``turnback checkpoint -m x --json`` as they type ``gh pr list --json`` or
``ruff check --fix``; click knows a group's options only before the verb. Each command
gets the same options, hidden from its help, setting the ``Ctx`` the group made; a
command's own option of the same name wins.
"""

from __future__ import annotations

from typing import Any

import click

from .common import Ctx


def _set(field: str) -> Any:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is None or value is False:
            return
        obj = ctx.find_object(Ctx)
        if obj is not None:
            setattr(obj, field, value)

    return callback


def _options() -> list[click.Option]:
    return [
        click.Option(["--json", "__tb_json"], is_flag=True, default=False, hidden=True,
                     expose_value=False, callback=_set("as_json")),
        click.Option(["-C", "--workspace", "__tb_workspace"], default=None, hidden=True,
                     expose_value=False, callback=_set("workspace")),
        click.Option(["--store", "__tb_store"], default=None, hidden=True,
                     expose_value=False, callback=_set("store_dir")),
    ]


def accept_global_options(cmd: click.Command) -> None:
    """Give ``cmd`` (and a group's commands, recursively) the group's options."""
    taken = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}
    for option in _options():
        if not taken.intersection(option.opts):
            cmd.params.append(option)
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            accept_global_options(sub)
