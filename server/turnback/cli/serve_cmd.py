"""``turnback serve``: the language server on stdio (what the editor extension runs), or
the background server of one workspace (``--background``, ``--stop``; docs/RELIABILITY.md
"The background server")."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import Ctx, pass_ctx


@click.command("serve")
@click.option("--background", is_flag=True,
              help="Start this workspace's background server (detached) and return: it "
                   "watches the workspace and answers the CLI's hand-offs until idle for "
                   "TURNBACK_BACKGROUND_IDLE seconds (1800; at most 86400).")
@click.option("--stop", is_flag=True, help="Ask this workspace's background server to leave.")
@click.option("--headless", is_flag=True, hidden=True,
              help="Be the background server, in this process (what --background starts).")
@pass_ctx
def serve_cmd(ctx: Ctx, background: bool, stop: bool, headless: bool) -> None:
    """Run the Turnback language server on stdin/stdout (JSON-RPC, LSP framing).

    Workspace folders and settings come from the client's initialize request;
    the methods are described in docs/PROTOCOL.md.
    """
    if sum((background, stop, headless)) > 1:
        raise click.UsageError("--background, --stop and --headless exclude each other")
    if background or stop:
        sys.exit(_background(ctx, stop))
    if not headless:
        from ..server.watching.startwalk import begin

        begin()  # before any thread: the start-up walk's second core (server/watching/startwalk.py)
    from ..server.codecache import install

    install()  # before pygls and lsprotocol are imported
    if headless:
        from ..server.background import main as headless_main

        sys.exit(headless_main(ctx.find_workspace(), ctx.store_dir))
    from ..server.app import main

    sys.exit(main())


def _background(ctx: Ctx, stop: bool) -> int:
    from ..fs import sockets
    from ..store import background_lock
    from . import background, handoff

    ws = str(ctx.find_workspace().resolve())
    root = handoff.store_root(ws, ctx.store_dir)
    if stop:
        pid = background_lock.holder(Path(root))
        path = sockets.socket_path(root)
        fields = [str(sockets.VERSION), "leave", ws, root, "0"]
        if path is not None and sockets.usable_socket(path) and sockets.exchange(
                path, sockets.encode_request(fields)) is not None:
            click.echo(f"the background server of {root} left" +
                       (f" (pid {pid})" if pid else ""))
            return 0
        if pid is None:
            click.echo(f"no background server serves {root}")
            return 0
        click.echo(f"turnback: the background server of {root} (pid {pid}) did not answer; "
                   f"end it with `kill {pid}`", err=True)
        return 1
    if not sockets.available():
        click.echo("turnback: this platform has no AF_UNIX sockets: no background server",
                   err=True)
        return 1
    found = background.wanted(ws, root)
    if found is None:
        click.echo(f"no background server started for {root}: a server already serves it, "
                   f"or there is no store of yours there ({background.ENV}=0 also turns "
                   "them off)", err=True)
        return 1
    background.start(found, forced=True)
    click.echo(f"starting a background server for {ws}")
    return 0
