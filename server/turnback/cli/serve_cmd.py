"""``turnback serve``: the language server on stdio (what the editor extension runs)."""

from __future__ import annotations

import sys

import click


@click.command("serve")
def serve_cmd() -> None:
    """Run the Turnback language server on stdin/stdout (JSON-RPC, LSP framing).

    Workspace folders and settings come from the client's initialize request;
    the methods are described in docs/PROTOCOL.md.
    """
    from ..server.startwalk import begin

    begin()  # before any thread: the start-up walk's second core (server/startwalk.py)
    from ..server.codecache import install

    install()  # before pygls and lsprotocol are imported
    from ..server.app import main

    sys.exit(main())
