"""``checkpoint``, ``rewind`` and ``undo`` done by this process without click.

What an agent's hook runs where no server serves the store (no editor open): a fresh
process whose cost is Python's start, the store's imports and a walk of the workspace.
click and the other commands' modules are about 10 ms of that on one core, for
nothing a hook's plain command line needs: the line is read by ``handoff.parse`` (the
very reading the hand-off trusts, which declines anything click might read
differently), the store does the work, and ``interchange/cli_text.py`` prints it (the
bytes and exit codes of the click commands and of a server's answer alike). Anything
else, ``--help``, an option after the verb or a terminal (click's progress bar), is
left to click.
"""

from __future__ import annotations

import os
import sys

from .handoff import Request, parse

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TextIO

    from ..interchange.cli_text import Printed
    from ..store.facade import Store

VERBS = ("checkpoint", "rewind", "undo")


def auto_init() -> bool:
    """Whether ``TURNBACK_AUTO_INIT`` asks a command that finds no store to make one: set,
    and not ``0`` (as ``TURNBACK_BACKGROUND=0`` and ``TURNBACK_HANDOFF=0`` turn theirs off;
    ``0`` turned it on, as any non-empty value did)."""
    return os.environ.get("TURNBACK_AUTO_INIT", "") not in ("", "0")


def run_argv(argv: list[str]) -> int | None:
    """``run`` of the command line ``argv`` if ``handoff.parse`` reads it, else None."""
    req = parse(argv)
    return run(req) if req is not None else None


def run(req: Request) -> int | None:
    """Do ``req`` and print it; the exit code, or None: left to click (nothing done)."""
    if req.verb not in VERBS or (sys.stderr is not None and sys.stderr.isatty()):
        return None
    from pathlib import Path

    from ..errors import TurnbackError
    from ..interchange import cli_text
    from ..store.facade import Store
    from .main import imports_done

    imports_done()
    try:
        store = Store.open(Path(req.workspace) if req.workspace else _find_workspace(),
                           store_dir=req.store,
                           create=req.verb == "checkpoint" or auto_init())
        try:
            # a one-shot process: a full scan may fork a child to check folders on the
            # other core (``Ctx.open`` says the same to click's commands)
            store.scanner.fork_verify = True
            tell_notices(store)
            out, err = _do(store, req)
            if req.verb == "checkpoint":
                store.close()  # closed, then printed, as the click command does
            _write(sys.stdout, out)
            _write(sys.stderr, err)
            store.close()  # its log's descriptor too, before the logs are merged
            merge_logs_after(store)
        finally:
            store.close()  # a second close does nothing
    except (TurnbackError, OSError) as exc:
        code, text = cli_text.error(exc, req.verb) or (1, str(exc))
        _write(sys.stderr, text)
        return code
    except KeyboardInterrupt:
        _write(sys.stderr, "\nAborted!\n")  # as click says it
        return 1
    return 0


def tell_notices(store: Store, probe: bool = False) -> None:
    """Say on stderr, once for each cause, what the store found and set aside (a refused
    object log, a repaired checkpoints.jsonl: ``store/notices.py``), on every CLI path that
    opens the store itself: click's commands (``Ctx.open``), this fast path and the agents'
    hook (``hook_cmd``), which said nothing before (trust21). Right after the open, before
    the command's own output; a warning never stops the command, nor does its module
    failing to import after an upgrade (``CodeChanged``; ``SyntaxError``, a file of it
    half-written): said once, the command goes on. ``probe``: every cause looked for
    (``Store.notices``), not only this process's (``status``: a rewind's journal a server
    emptied, trust38)."""
    from ..errors import CodeChanged

    try:
        for notice in store.untold_notices("cli", store.notices() if probe else None):
            _write(sys.stderr, f"turnback: {notice.message}\n")
    except OSError:
        pass
    except (CodeChanged, SyntaxError) as exc:  # its own text says "nothing was changed":
        # not so here. SyntaxError: a module file half-written by an upgrade (redteam38),
        # or zero-filled by a crash (3.10's ValueError made one: errors.imported_late)
        why = exc.__cause__ if isinstance(exc, CodeChanged) else exc  # names the file
        _write(sys.stderr, "turnback: what the store set aside could not be shown: "
               f"Turnback's code could not be imported ({why}); its files changed "
               "since this command started (upgraded while it ran?). The command goes on; "
               "run it again, or reinstall Turnback if this comes back\n")


def merge_logs_after(store: Store) -> None:
    """Once the answer is printed: merge the object logs if they are many
    (``Store.merge_logs``), so that a store served only by fresh processes keeps a bounded
    number of them. A failure leaves them for a later process; the command's result
    stands either way."""
    from ..errors import TurnbackError

    try:
        store.merge_logs()
    except (TurnbackError, OSError):
        pass


def _do(store: Store, req: Request) -> Printed:
    from ..interchange import cli_text

    dry_run = "dryRun" in req.options
    if req.verb == "checkpoint":
        cp = store.checkpoint(label=req.options.get("label"),
                              session_id=req.options.get("session"),
                              auto="auto" in req.options)
        return cli_text.checkpoint(cp.to_json(), req.as_json)
    if req.verb == "undo":
        return cli_text.rewind(store.undo(dry_run).to_json(), "undo", req.as_json)
    res = store.rewind(req.args[0], req.args[1:] or None, req.options.get("mode", "files"),
                       dry_run)
    return cli_text.rewind(res.to_json(), "dry run" if dry_run else "rewind", req.as_json)


def _find_workspace() -> Path:
    """The nearest folder upward holding a store, else the current one (``Ctx``'s)."""
    from pathlib import Path

    from .handoff import find_workspace

    return Path(find_workspace(None))


def _write(stream: TextIO | None, text: str) -> None:
    """Print ``text``; nowhere if the process has no such stream (click's ``echo`` too).
    A stream whose encoding is ASCII (``PYTHONIOENCODING=ascii``, an old locale) gets
    UTF-8, unencodable characters replaced, as click's ``echo`` rewraps it: written as
    is, a non-ASCII label raised UnicodeEncodeError after the checkpoint was made."""
    if not text or stream is None:
        return
    if _is_ascii(getattr(stream, "encoding", None)) and hasattr(stream, "buffer"):
        stream.flush()
        stream.buffer.write(text.encode("utf-8", "replace"))
        stream.buffer.flush()
        return
    stream.write(text)
    stream.flush()


def _is_ascii(encoding: str | None) -> bool:
    """click's ``is_ascii_encoding``."""
    import codecs

    try:
        return codecs.lookup(encoding or "").name == "ascii"
    except LookupError:
        return False
