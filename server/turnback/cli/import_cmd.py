"""``turnback import SOURCE [PATH]``: read sessions other tools wrote into the store."""

from __future__ import annotations

import sys
from typing import Any

import click
import orjson

from ..errors import InvalidInput
from ..events import SessionHeader, now_iso
from ..fs.paths import expand_home, one_line, quote
from ..importers import SOURCES, ImportResult, import_source, registry
from ..importers.base import short_title
from ..store.facade import Store
from .common import Ctx, emit, pass_ctx, progress_bar

HOOK_SOURCES = ("claude-code",)


@click.command("import", epilog="\b\nSources:\n" + "\n".join(
    f"  {s.name:16} {s.summary}" + (f"\n  {'':16} without PATH: {s.default}" if s.default else "")
    for s in SOURCES.values()))
@click.argument("source", type=click.Choice([*SOURCES, "all"]), metavar="SOURCE")
@click.argument("path", required=False)
@click.option("--discover", is_flag=True,
              help="List this workspace's sessions SOURCE keeps on this machine (SOURCE 'all': "
              "every agent's) without importing them.")
@click.option("--home", default=None, metavar="DIR",
              help="Look for agents' sessions under DIR instead of your home folder.")
@click.option("--from-hook", is_flag=True,
              help="Read a Claude Code hook's JSON on stdin and import its transcript "
              "(the workspace is the hook's cwd unless -C is given).")
@click.option("--checkpoint", "checkpoint_label", default=None, metavar="LABEL",
              help="Then checkpoint the workspace in the imported session (with --from-hook: "
              "the hook's session), labelled LABEL.")
@pass_ctx
def import_cmd(ctx: Ctx, source: str, path: str | None, home: str | None, from_hook: bool,
               checkpoint_label: str | None, discover: bool) -> None:
    """Import the sessions SOURCE wrote (PATH: a file or folder; default: the tool's usual place).

    Importing again adds only what is new. Lines that cannot be read are reported
    as FILE:LINE on stderr and the rest is imported. SOURCE 'all' imports every
    agent's sessions of this workspace. A file another tool wrote is refused,
    naming the source it looks like.
    """
    if discover:
        _discover(ctx, source, path, home)
        return
    if source == "all":
        if path is not None or from_hook:
            raise InvalidInput("'import all' takes no PATH nor --from-hook: it imports what "
                               "--discover lists")
        _import_all(ctx, home)
        return
    hook: dict[str, Any] = {}
    if from_hook:
        if source not in HOOK_SOURCES:
            raise InvalidInput(f"--from-hook works with {', '.join(HOOK_SOURCES)}, not {source!r}")
        if path is not None:
            raise InvalidInput("give PATH or --from-hook, not both (the hook names the transcript)")
        hook = _read_hook()
        if not ctx.workspace and isinstance(hook.get("cwd"), str):
            ctx.workspace = hook["cwd"]
    store = ctx.open(create=True)
    try:
        if from_hook:
            result = _import_hook(store, hook, home)
        else:
            with progress_bar(f"import {source}", unit="B") as bar:
                result = import_source(store, source, path, progress=bar, home=home)
        checkpoint = None
        if checkpoint_label is not None:
            checkpoint = _checkpoint(store, result, hook, checkpoint_label)
    finally:
        store.close()
    out = result.to_json()
    if checkpoint is not None:
        out["checkpoint"] = checkpoint
    for p in result.problems:
        click.echo(f"turnback: {one_line(str(p))}", err=True)
    if result.problems_omitted:
        click.echo(f"turnback: … and {result.problems_omitted} more problems", err=True)

    def human() -> None:
        if result.files == 0 and not from_hook:
            where = path or SOURCES[source].default
            click.echo(f"no {source} sessions of this workspace found in {quote(str(where))}",
                       err=True)
        click.echo(f"imported {result.events} new events, {result.checkpoints} checkpoints, "
                   f"{len(result.sessions)} sessions from {result.files} files")
        if checkpoint is not None:
            click.echo(f"checkpoint {checkpoint['id']}  {one_line(checkpoint['label'])}")

    emit(ctx, out, human)


def _discover(ctx: Ctx, source: str, path: str | None, home: str | None) -> None:
    if path is not None:
        raise InvalidInput("--discover takes no PATH: it lists what SOURCE keeps for this "
                           "workspace")
    workspace = ctx.find_workspace().absolute()
    found = registry.discover(workspace, home=home,
                              sources=None if source == "all" else [source])
    out = [{"source": f.source, "path": str(f.path), "followable": f.followable}
           for f in found]

    def human() -> None:
        if not found:
            click.echo(f"no {'agent' if source == 'all' else source} sessions of "
                       f"{quote(str(workspace))} found on this machine", err=True)
        for f in found:
            click.echo(f"{f.source:12} {quote(str(f.path))}")

    emit(ctx, {"found": out}, human)


def _import_all(ctx: Ctx, home: str | None) -> None:
    store = ctx.open(create=True)
    results: dict[str, ImportResult] = {}
    try:
        for name in sorted({f.source for f in registry.discover(store.workspace, home=home)}):
            with progress_bar(f"import {name}", unit="B") as bar:
                results[name] = import_source(store, name, progress=bar, home=home)
    finally:
        store.close()
    for result in results.values():
        for p in result.problems:
            click.echo(f"turnback: {one_line(str(p))}", err=True)

    def human() -> None:
        if not results:
            click.echo("no agent sessions of this workspace found on this machine", err=True)
        for name, r in results.items():
            click.echo(f"{name}: imported {r.events} new events, {r.checkpoints} checkpoints, "
                       f"{len(r.sessions)} sessions from {r.files} files")

    emit(ctx, {name: r.to_json() for name, r in results.items()}, human)


def _read_hook() -> dict[str, Any]:
    raw = sys.stdin.buffer.read()
    try:
        hook = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"--from-hook: stdin is not the hook's JSON ({exc})") from exc
    if not isinstance(hook, dict):
        raise InvalidInput("--from-hook: stdin must be a JSON object")
    return hook


def _import_hook(store: Store, hook: dict[str, Any], home: str | None) -> ImportResult:
    """Import the hook's transcript; a session whose transcript is not written yet is created."""
    transcript = hook.get("transcript_path")
    if isinstance(transcript, str) and expand_home(transcript).is_file():
        return import_source(store, "claude-code", transcript, home=home)
    sid = hook.get("session_id")
    if not isinstance(sid, str):
        raise InvalidInput("--from-hook: the hook JSON has neither a readable "
                           "'transcript_path' nor a 'session_id'")
    # The first prompt of a session arrives before Claude Code writes the transcript.
    cwd = hook.get("cwd") if isinstance(hook.get("cwd"), str) else None
    store.ensure_session(SessionHeader(sid, agent="claude-code", source="claude-code", cwd=cwd,
                                       started=now_iso()))
    result = ImportResult()
    result.add_session(sid)
    return result


def _checkpoint(store: Store, result: ImportResult, hook: dict[str, Any],
                label: str) -> dict[str, Any]:
    sid = hook.get("session_id") if isinstance(hook.get("session_id"), str) else None
    if sid is None:
        if len(result.sessions) != 1:
            raise InvalidInput(f"--checkpoint needs one imported session, this import has "
                               f"{len(result.sessions)}; use 'turnback checkpoint --session ID'")
        sid = result.sessions[0]
    prompt = hook.get("prompt")
    if isinstance(prompt, str) and short_title(prompt):
        label = f"{label}: {short_title(prompt, 60)}"
    cp = store.checkpoint(label=label, session_id=sid, auto=True)
    out: dict[str, Any] = cp.to_json()
    return out
