"""``turnback hook AGENT EVENT``: what an agent's own hook runs (``turnback hooks install``).

The agent waits for its hook, so this is bounded and never fails it: whatever
goes wrong (no store, a bad input, a locked store, a slow disk), the command
says so on stderr and exits 0 within ``TURNBACK_HOOK_TIMEOUT`` seconds (10),
and the agent goes on. It checkpoints the workspace through the same Store API
as ``turnback checkpoint``, in the agent's session, labelled with the moment.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import Ctx, pass_ctx

if TYPE_CHECKING:
    from ..importers.hooks import HookCall
    from ..store.facade import Store

TIMEOUT_ENV = "TURNBACK_HOOK_TIMEOUT"
DEFAULT_TIMEOUT_S = 10.0
MAX_INPUT = 4 << 20  # the hook JSON (Claude Code's holds the prompt)


@click.command("hook")
@click.argument("agent")
@click.argument("event")
@click.argument("payload", required=False)
@pass_ctx
def hook_cmd(ctx: Ctx, agent: str, event: str, payload: str | None) -> None:
    """Run by AGENT's hook at EVENT: checkpoint the workspace (hook JSON on stdin).

    Codex passes its JSON as PAYLOAD instead. Always exits 0.
    """
    from ..importers.hooks import spec

    try:
        stdout = spec(agent).stdout
    except Exception as exc:
        _done(f"turnback hook: {getattr(exc, 'message', exc)}", "")
    try:
        limit = float(os.environ.get(TIMEOUT_ENV, "") or DEFAULT_TIMEOUT_S)
    except ValueError:
        limit = DEFAULT_TIMEOUT_S
    outcome: list[str] = []

    def run() -> None:
        try:
            outcome.append(_checkpoint(ctx, agent, event, payload))
        except BaseException as exc:  # reported, never raised into the agent
            outcome.append(f"turnback hook: no checkpoint ({getattr(exc, 'message', exc)}); "
                           "the agent goes on")

    worker = threading.Thread(target=run, name="turnback-hook", daemon=True)
    worker.start()
    worker.join(limit)
    if not outcome:
        # A checkpoint cut short commits nothing (the store's commit is atomic).
        _done(f"turnback hook: no checkpoint within {limit:g} s ({TIMEOUT_ENV}); "
              "the agent goes on", stdout)
    _done(outcome[0], stdout)


def _done(message: str, stdout: str) -> None:
    if message:
        sys.stderr.write(message + "\n")
    if stdout:
        sys.stdout.write(stdout + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # not SystemExit: a stuck worker thread must not hold the agent


def _read_stdin() -> bytes:
    stdin = sys.stdin.buffer
    if stdin.isatty():
        return b""
    return stdin.read(MAX_INPUT)


def _checkpoint(ctx: Ctx, agent: str, event: str, payload: str | None) -> str:
    from ..events import SessionHeader, check_id, now_iso
    from ..importers.base import short_title
    from ..importers.hooks import PROMPT, parse_call

    raw = payload.encode() if payload is not None else _read_stdin()
    call = parse_call(agent, event, raw)
    workspace = _workspace(ctx, agent, call.workspace)
    sid = call.session_id
    if sid is not None:
        try:
            check_id(sid, "session id")
        except Exception:
            sid = None  # an id Turnback cannot hold: the workspace's own session
    label = "new turn" if call.moment == PROMPT else "end of turn"
    if call.prompt:
        label += ": " + short_title(call.prompt, 60)
    if _handed_off(ctx, workspace, label, sid):
        return ""
    from . import background, handoff

    # no server took it: leave one watching for the agent's next hook (after this one's work)
    real = os.path.realpath(workspace)
    watcher = background.wanted(real, handoff.store_root(real, ctx.store_dir))

    from ..store.facade import Store

    store = Store.open(workspace, store_dir=ctx.store_dir, create=True)
    store.scanner.fork_verify = True  # a one-shot process, as `turnback checkpoint`
    try:
        from .direct import tell_notices

        tell_notices(store)  # on stderr: a hook's stdout is the agent's to read
        if sid is not None and not store.has_session(sid):
            _import_first(store, call)  # the session's own header, title and history
        if sid is not None and not store.has_session(sid):
            store.ensure_session(SessionHeader(id=sid, agent=agent, started=now_iso(),
                                               cwd=str(call.workspace or workspace),
                                               source=agent))
        store.checkpoint(label=label, session_id=sid, auto=True)
    finally:
        store.close()
    from .direct import merge_logs_after

    merge_logs_after(store)  # the hook prints nothing: its answer is its exit
    background.start(watcher)
    return ""


def _handed_off(ctx: Ctx, workspace: Path, label: str, sid: str | None) -> bool:
    """Have a server serving this store make the checkpoint (``cli/handoff.py``): its
    watcher knows what changed, so the agent waits a socket round trip instead of the
    store's start and a walk. A session the store does not hold yet is refused there
    before anything is done (``NotFound``); then this process imports it first."""
    from . import handoff

    argv = ["-C", str(workspace)]
    if ctx.store_dir is not None:
        argv += ["--store", ctx.store_dir]
    argv += ["checkpoint", "--auto", "-m", label]
    if sid is not None:
        argv += ["--session", sid]
    found = handoff.request_for(argv)
    if found is None:
        return False
    answer = handoff.exchange(*found)
    if answer is None or answer[0] != 0:
        return False
    # the store's notices, told once (the server's ``_notices``), on stderr; not the
    # checkpoint's own lines (skipped files), which the hook working alone never prints
    told = b"".join(line for line in answer[2].splitlines(keepends=True)
                    if line.startswith(b"turnback: "))
    if told:
        sys.stderr.buffer.write(told)
        sys.stderr.flush()
    return True


def _import_first(store: Store, call: HookCall) -> None:
    """A session met for the first time: import its transcript, as following would.

    Once per session (later hooks find it in the store); a transcript that cannot be
    read (a link, another tool's file) leaves a bare session, filled in by a later
    import or by the editor's follower.
    """
    from ..importers.registry import SOURCES
    from ..importers.runner import import_source

    if call.transcript is None or call.agent not in SOURCES:
        return
    try:
        import_source(store, call.agent, call.transcript)
    except Exception as exc:
        sys.stderr.write(f"turnback hook: {call.transcript} not imported "
                         f"({getattr(exc, 'message', exc)})\n")


def _workspace(ctx: Ctx, agent: str, cwd: Path | None) -> Path:
    """-C, else the project folder the agent names, else the nearest store upward of its cwd."""
    if ctx.workspace:
        return Path(ctx.workspace)
    project = os.environ.get("CLAUDE_PROJECT_DIR") if agent == "claude-code" else None
    if project and os.path.isabs(project):
        return Path(project)
    start = cwd or Path.cwd()
    from ..store.config import STORE_DIRNAME

    for d in (start, *start.parents):
        if (d / STORE_DIRNAME / "config.json").exists():
            return d
    return start
