"""``session start|list|show|end``, ``record``, ``fork``, ``log``."""

from __future__ import annotations

import os

import click

from ..errors import InvalidInput, NotFound
from ..fs.paths import one_line
from ..models import Checkpoint
from ..store.facade import HEAD, Store
from ..store.safety_names import event_summary, has_undo, words
from .common import Ctx, emit, parse_json_arg, pass_ctx
from .times import local_clock, local_time


def default_session(store: Store, given: str | None) -> str:
    """--session, else $TURNBACK_SESSION, else the newest session of this machine's that
    has not ended (``Store.newest_open_session``)."""
    if given:
        return given
    env = os.environ.get("TURNBACK_SESSION")
    if env:
        return env
    newest = store.newest_open_session()
    if newest is not None:
        return newest
    raise NotFound("no open session: give --session ID or start one with 'turnback session start'")


@click.group("session")
def session_group() -> None:
    """Start, list, show and end sessions."""


@session_group.command("start")
@click.option("--title", default="", help="What the session is about.")
@click.option("--agent", default="unknown", help="The agent or tool running it.")
@click.option("--model", default=None, help="The model it uses.")
@click.option("--id", "session_id", default=None, help="Use this id instead of a new one.")
@pass_ctx
def session_start(ctx: Ctx, title: str, agent: str, model: str | None,
                  session_id: str | None) -> None:
    """Start a session and print its id."""
    store = ctx.open(create=True)
    h = store.start_session(title=title, agent=agent, model=model, session_id=session_id)
    emit(ctx, h.to_json(), h.id)


@session_group.command("list")
@click.option("--query", "-q", default=None, help="Only sessions whose id/title/agent match.")
@click.option("--limit", type=click.IntRange(min=1), default=None)
@click.option("--offset", type=click.IntRange(min=0), default=0)
@click.option("--wait", is_flag=True,
              help="Count every session before printing. Without it, a store with many "
                   "sessions never counted (never listed, or just pulled) prints at once, "
                   "those sessions from their first line with no events.")
@pass_ctx
def session_list(ctx: Ctx, query: str | None, limit: int | None, offset: int,
                 wait: bool) -> None:
    """List sessions, newest first."""
    store = ctx.open()
    if wait:
        items, total = store.sessions(offset, limit, query)
        partial = False
    else:  # counting 10,000,000 events first takes a minute: the server answers so too
        items, total, partial = store.sessions_at_once(offset, limit, query)

    def human() -> None:
        for s in items:
            agent = one_line(s.header.agent)  # a pulled session's is another machine's text
            started = s.stats.get("startedAt") if s.counted else s.header.started
            events = f"{s.events:>6} events" if s.counted else "  not counted"
            click.echo(f"{s.header.id}  {local_time(started or '')}  {agent:<12} "
                       f"{events}  {one_line(s.header.title)}")
        uncounted = sum(1 for s in items if not s.counted)
        more = (f"; {uncounted} not counted yet, shown from their first line: 'turnback "
                "session list --wait' counts every session first") if uncounted else ""
        click.echo(f"({len(items)} of {total}{more})")

    out: dict[str, object] = {"sessions": [s.to_json() for s in items], "total": total}
    if partial:  # as turnback/sessions says it (docs/PROTOCOL.md)
        out["partial"] = True
    emit(ctx, out, human)


@session_group.command("show")
@click.argument("session_id")
@pass_ctx
def session_show(ctx: Ctx, session_id: str) -> None:
    """Show a session: header, stats and events (the head is marked)."""
    store = ctx.open()
    log = store.session(session_id)
    summary = store.session_summary(session_id)
    out = {"session": summary.to_json(), "head": log.head, "stats": summary.stats,
           "events": [e.to_json() for e in log.events],
           "problems": [p.to_json() for p in log.problems]}

    def human() -> None:
        h = log.header
        click.echo(f"session {h.id}  {one_line(h.title)}\nagent {one_line(h.agent)}  model "
                   f"{one_line(h.model or '-')}  "
                   f"started {local_time(h.started or '')}")
        st = summary.stats
        click.echo(f"prompts {st['prompts']}  responses {st['responses']}  tool calls "
                   f"{st['toolCalls']} ({st['toolCallsFailed']} failed)  checkpoints "
                   f"{st['checkpoints']}  rewinds {st['rewinds']}  tokens in "
                   f"{st['tokens']['input']} out {st['tokens']['output']}")
        by_id = {c.id: c for c in store.checkpoints(None)} if has_undo(log.events) else {}
        for e in log.events:
            mark = "*" if e.id == log.head else " "
            click.echo(f"{mark} {e.id:<20} {local_clock(e.ts)} {e.kind:<14} "
                       f"{one_line(event_summary(e, by_id, 80))}")
        for p in log.problems:
            click.echo(f"warning: {one_line(str(p))}", err=True)

    emit(ctx, out, human)


@session_group.command("end")
@click.argument("session_id")
@pass_ctx
def session_end(ctx: Ctx, session_id: str) -> None:
    """Mark a session as ended."""
    store = ctx.open()
    store.end_session(session_id)
    emit(ctx, {"session": session_id, "ended": True}, f"ended {session_id}")


@click.command("record")
@click.argument("kind")
@click.option("--session", "session_id", default=None, help="Session id (default: "
              "$TURNBACK_SESSION, else the newest open session not pulled from another machine).")
@click.option("--data", default=None, help="Event data as a JSON object, or - to read stdin.")
@click.option("--text", default=None, help="Shorthand for --data '{\"text\": TEXT}'.")
@click.option("--parent", default=None, help="Parent event id (default: the session head).")
@pass_ctx
def record(ctx: Ctx, kind: str, session_id: str | None, data: str | None, text: str | None,
           parent: str | None) -> None:
    """Append an event of KIND (prompt, response, tool_call, note, ...) to a session."""
    if data is not None and text is not None:
        raise InvalidInput("give --data or --text, not both")
    payload = parse_json_arg(data, "--data") if data is not None else {}
    if text is not None:
        payload = {"text": text}
    store = ctx.open()
    sid = default_session(store, session_id)
    ev = store.append(sid, kind, payload, parent=parent if parent else HEAD)
    emit(ctx, ev.to_json(), ev.id)


@click.command("fork")
@click.argument("event_id")
@click.option("--session", "session_id", default=None)
@pass_ctx
def fork(ctx: Ctx, event_id: str, session_id: str | None) -> None:
    """Move a session's head to EVENT_ID: new events branch from there."""
    store = ctx.open()
    sid, head = store.fork(event_id, session_id)
    emit(ctx, {"sessionId": sid, "head": head}, f"session {sid}: head is now {head}")


def _named(cid: object, by_id: dict[str, Checkpoint]) -> str:
    """A checkpoint id of the operation log with the checkpoint's name in words
    ("e40156470bcb “Tests pass”"); an id the store no longer lists, bare."""
    if not isinstance(cid, str) or not cid:
        return "-"
    cp = by_id.get(cid)
    if cp is None:
        return one_line(cid)
    return f"{one_line(cid)} “{one_line(words(cp, by_id))}”"


@click.command("log")
@pass_ctx
def oplog(ctx: Ctx) -> None:
    """The operation log: every rewind and undo."""
    store = ctx.open()
    ops = store.log()

    def human() -> None:
        if not ops:
            click.echo("no rewinds yet")
            return
        by_id = {c.id: c for c in store.checkpoints(None)}
        for op in ops:
            click.echo(f"{local_time(str(op.get('ts', '')))}  {one_line(str(op.get('op'))):<6} "
                       f"{one_line(str(op.get('mode'))):<12} "
                       f"to {_named(op.get('checkpoint'), by_id)}  "
                       f"safety {one_line(str(op.get('safety') or '-'))}")

    emit(ctx, {"operations": ops}, human)
