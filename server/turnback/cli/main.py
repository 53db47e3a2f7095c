"""Entry point: ``turnback [-C DIR] [--store DIR] [--json] VERB ...``.

Light on purpose: a request a running server can do is handed to it first
(``handoff``, which imports next to nothing); else ``turnback checkpoint`` (and
``rewind``, ``undo``: their safety checkpoint scans the same way) forks a child that
starts checking the workspace's folder records (``prescan.fork_early``),
and only then imports the store (about 40 ms on one core, while the child works on
the other); a plain ``checkpoint``, ``rewind`` or ``undo`` line is then done without
click (``direct``). Where no server took the request, one is started in the background for the
next call once the work is done (``background``). The group itself is in ``app``.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
SCANNING = ("checkpoint", "rewind", "undo")  # verbs whose first work is a full scan
if TYPE_CHECKING:
    from typing import Any


def main() -> None:
    from .handoff import handoff

    code = handoff(sys.argv[1:])
    if code is not None:
        # done by the server and printed: nothing of this process needs tearing down
        os._exit(code)
    # No cyclic collection while this process imports the store (or click): their modules
    # make many objects and few cycles, and the collector's passes over them were ~5 ms of
    # CPU of a no-op checkpoint's ~50 ms of imports (bench/RESULTS.md, issue 16, branch
    # cli16e). Back on before the work, what the imports made frozen (``imports_done``), as
    # the server does (``server/__main__.py``).
    gc.disable()
    from . import background

    # no server took it: once this work is done, one is left watching for the next call
    watcher = background.candidate(sys.argv[1:])
    scans = _start_checks(sys.argv[1:])
    from . import direct

    done = direct.run_argv(sys.argv[1:])
    if done is not None:
        background.start(watcher)
        _exit_now(done)
        sys.exit(done)
    from .app import cli

    imports_done()
    try:
        cli(prog_name="turnback")
    except SystemExit as exc:
        background.start(watcher)
        if scans:
            _exit_now(exc.code)
        raise


def imports_done() -> None:
    """The cyclic collector back on (``main`` turned it off), without passes over what the
    imports made."""
    gc.freeze()
    gc.enable()


def _exit_now(code: object) -> None:
    """After a checkpoint or a rewind (recorded, the store closed): leave without tearing the
    interpreter down, which frees every module and object one by one (~9 ms of a no-op
    checkpoint's ~150). The exit handlers run and the output is flushed first. Returns
    (a normal exit follows) if another thread runs, whose end that exit would wait for,
    or if the code is a message to print, or if the output cannot be flushed."""
    import threading

    if code is None:
        code = 0
    if not isinstance(code, int) or threading.active_count() != 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _start_checks(args: list[str]) -> bool:
    """For ``turnback [-C DIR] [--store DIR] [--json] checkpoint|rewind|undo ...``: start
    the early child on the workspace and stat cache that ``Store.open`` will find, and
    say so. A rewind's safety checkpoint is the same full scan as a checkpoint's.
    Anything else (another verb, an option not understood here) starts nothing; a wrong
    guess is caught by the scan, which then kills the child."""
    if not sys.platform.startswith("linux"):
        return False
    workspace: str | None = None
    store_dir = os.environ.get("TURNBACK_STORE") or None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-C", "--workspace", "--store") and i + 1 < len(args):
            if arg == "--store":
                store_dir = args[i + 1]
            else:
                workspace = args[i + 1]
            i += 2
        elif arg.startswith("--workspace="):
            workspace, i = arg.partition("=")[2], i + 1
        elif arg.startswith("--store="):
            store_dir, i = arg.partition("=")[2], i + 1
        elif arg.startswith("-C") and len(arg) > 2:
            workspace, i = arg[2:], i + 1
        elif arg == "--json":
            i += 1
        else:
            break
    rest = args[i:]
    if not rest or rest[0] not in SCANNING or "-h" in rest or "--help" in rest:
        return False
    from .handoff import find_workspace, store_root

    try:
        root = store_root(ws := find_workspace(workspace), store_dir)
    except (OSError, ValueError):
        return False
    from ..snapshot import prescan

    prescan.fork_early(ws, os.path.join(root, "cache", "stat.bin"))
    return True


def __getattr__(name: str) -> Any:
    """``from turnback.cli.main import cli``: the group, imported on first use."""
    if name == "cli":
        from .app import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    main()
