"""Handing a request to a running server (the client side; ``server/jobs/handoff.py`` answers).

A fresh ``turnback`` process pays for Python and for the store's modules (~0.2 s) before
it reads anything, and then reads the workspace without knowing what changed. A server
serving the same store already has both: the modules loaded and, from its watcher, the
changed paths. So ``checkpoint``, ``rewind``, ``undo`` and ``status`` first look for the
server's socket in the store (``fs/sockets.py``) and, if one answers as Turnback and as
this user, send it the request and print what it prints (the same bytes: both print
through ``interchange/cli_text.py``). Like git with its fsmonitor daemon, the process
does the work itself whenever that fails: no socket (no server, or no AF_UNIX), a socket
that is not private and the user's, a refused or silent one, a server that declines
(another store, editor settings that change what a checkpoint holds) or goes away
before answering. A server that takes the request and then stops answering is
abandoned after ``sockets.IDLE_TIMEOUT_S`` without a keep-alive: never a hang.

Only arguments understood here are handed over (anything unusual, ``--help`` included,
is left to click in this process). This module imports only ``os``, ``sys`` and
``fs/sockets``: the point is to start nothing heavy. ``TURNBACK_HANDOFF=0`` turns it off.
"""

from __future__ import annotations

import os
import sys

from ..fs import sockets
from ..fs.sockets import exchange

__all__ = ["exchange", "handoff", "parse", "request_for"]  # exchange: hook_cmd's, the tests'

STORE_DIRNAME = ".turnback"  # store.config.STORE_DIRNAME (not imported: see above)

# verb → (options taking a value, flags, positional arguments: min, max (-1: any))
_VERBS: dict[str, tuple[dict[str, str], dict[str, str], int, int]] = {
    "checkpoint": ({"-m": "label", "--label": "label", "--session": "session"},
                   {"--auto": "auto"}, 0, 0),
    "rewind": ({"--mode": "mode"}, {"--dry-run": "dryRun"}, 1, -1),
    "undo": ({}, {"--dry-run": "dryRun"}, 0, 0),
    "status": ({}, {}, 0, 0),
}
_MODES = ("files", "conversation", "both")


class Request:
    """A command line this module understood."""

    def __init__(self, verb: str, workspace: str | None, store: str | None,
                 as_json: bool, options: dict[str, str], args: list[str]) -> None:
        self.verb = verb
        self.workspace = workspace
        self.store = store
        self.as_json = as_json
        self.options = options
        self.args = args


def parse(argv: list[str]) -> Request | None:
    """``[-C DIR] [--store DIR] [--json] VERB ...`` as click would read it, or None for
    anything not certainly read the same way (then click reads it, in this process)."""
    workspace: str | None = None
    store = os.environ.get("TURNBACK_STORE") or None
    as_json = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-C", "--workspace", "--store"):
            if i + 1 >= len(argv) or not _plain_value(argv[i + 1]):
                return None
            if arg == "--store":
                store = argv[i + 1]
            else:
                workspace = argv[i + 1]
            i += 2
        elif arg.startswith(("--workspace=", "--store=")):
            name, _, value = arg.partition("=")
            if not _plain_value(value):
                return None
            if name == "--store":
                store = value
            else:
                workspace = value
            i += 1
        elif arg == "--json":
            as_json, i = True, i + 1
        else:
            break
    if i >= len(argv) or argv[i] not in _VERBS:
        return None
    verb = argv[i]
    valued, flags, least, most = _VERBS[verb]
    options: dict[str, str] = {}
    args: list[str] = []
    rest = argv[i + 1:]
    j = 0
    while j < len(rest):
        arg = rest[j]
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in valued:
            if not eq:
                if j + 1 >= len(rest):
                    return None
                value, j = rest[j + 1], j + 1
            if not _plain_value(value):
                return None
            options[valued[name]] = value
        elif arg in flags:
            options[flags[arg]] = "1"
        elif arg.startswith("-"):
            return None  # --help, --, -mLABEL, an unknown option: click's to read
        else:
            args.append(arg)
        j += 1
    if len(args) < least or (most >= 0 and len(args) > most):
        return None
    if options.get("mode", "files") not in _MODES:
        return None
    if verb == "checkpoint" and "session" not in options:
        env = os.environ.get("TURNBACK_SESSION")
        if env:
            options["session"] = env
    return Request(verb, workspace, store, as_json, options, args)


def _plain_value(value: str) -> bool:
    return bool(value) and not value.startswith("-")


def find_workspace(given: str | None) -> str:
    """``Ctx.find_workspace`` then ``Store.open``'s resolving, without pathlib: ``-C``,
    else the nearest folder upward holding a store, else the current folder."""
    if given:
        return os.path.realpath(os.path.expanduser(given))
    cwd = d = os.getcwd()
    while True:
        if os.path.exists(os.path.join(d, STORE_DIRNAME, "config.json")):
            return os.path.realpath(d)
        up = os.path.dirname(d)
        if up == d:
            return os.path.realpath(cwd)
        d = up


def store_root(workspace: str, store: str | None) -> str:
    """Where ``Store.open`` will look (``default_store_dir``)."""
    if store:
        return os.path.realpath(os.path.expanduser(store))
    return os.path.join(workspace, STORE_DIRNAME)


def handoff(argv: list[str]) -> int | None:
    """Have a running server do ``argv``; its exit code once its output is printed, or
    None: this process must do the work itself (nothing was printed)."""
    found = request_for(argv)
    if found is None:
        return None
    answer = exchange(*found)
    if answer is None:
        return None
    code, out, err = answer
    try:
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
        if err:
            sys.stderr.buffer.write(err)
            sys.stderr.flush()
    except (OSError, ValueError):
        return code or 1  # the request was done; only its output could not be shown
    return code


def request_for(argv: list[str]) -> tuple[str, bytes] | None:
    """The usable socket and the request for ``argv``, or None (no hand-off)."""
    if os.environ.get("TURNBACK_HANDOFF") == "0":
        return None
    req = parse(argv)
    if req is None:
        return None
    try:
        ws = find_workspace(req.workspace)
        root = store_root(ws, req.store)
    except (OSError, ValueError):
        return None
    path = sockets.socket_path(root)
    # the socket file looked at before ``_socket`` is imported: where no server runs (no
    # file) the import (~0.5 ms, before the CLI's early fork) is not made at all
    if path is None or not sockets.usable_socket(path) or not sockets.available():
        return None
    fields = [str(sockets.VERSION), req.verb, ws, root, "1" if req.as_json else "0"]
    for key, value in req.options.items():
        fields += [key, value]
    for arg in req.args:
        fields += ["arg", arg]
    return path, sockets.encode_request(fields)
