"""``continue``: continue an agent (Claude Code, Codex) from before one of its turns."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from ..errors import InvalidInput
from ..fs.paths import one_line
from ..importers.base import Context
from ..importers.resume import CONTINUABLE, find_session_file, plan_fork, write_fork
from .common import Ctx, emit, pass_ctx


@click.command("continue")
@click.argument("turn")
@click.option("--dry-run", is_flag=True, help="Say what would be rewound and written; do nothing.")
@click.option("-y", "--yes", is_flag=True,
              help="Do not ask before writing the agent's new session file.")
@click.option("--agent-command", "run_agent", is_flag=True,
              help="Run the agent's resume command afterwards (else it is printed).")
@pass_ctx
def continue_cmd(ctx: Ctx, turn: str, dry_run: bool, yes: bool, run_agent: bool) -> None:
    """Continue the agent from before TURN (a turn's id: its prompt's event id, as
    'turnback session show --json' or the editor's Copy Id give it).

    Rewinds the files to the turn's start (undoable with 'turnback undo'), writes a new
    session file for the agent holding the conversation up to the turn (beside the
    original, which is never changed), and prints the agent's resume command."""
    store = ctx.open()
    event = store.find_event(turn)
    sid = event.session
    t = store.find_turn(sid, turn)
    agent = store.session_summary(sid).header.agent
    if agent not in CONTINUABLE:
        raise InvalidInput(f"session {sid} is a {agent} session: only {', '.join(CONTINUABLE)} "
                           "sessions can be continued by their agent (docs/IMPORT.md)")
    actx = Context(workspace=store.workspace, home=Path.home(), env=dict(os.environ))
    plan = plan_fork(agent, find_session_file(agent, sid, actx), t.id, actx)
    rewind = store.rewind(t.before, None, "files", dry_run=True) if t.before else None
    if not dry_run and not yes and not ctx.as_json:
        files = (len(rewind.written) + len(rewind.created) + len(rewind.removed)
                 if rewind else 0)
        click.echo(f"continue {agent} from before: {one_line(t.prompt)}")
        click.echo(f"  rewind {files} file(s) to the turn's start" if rewind else
                   "  no checkpoint before this turn: the files stay as they are")
        click.echo(f"  write {plan.target} ({plan.lines} lines of {plan.source.name})")
        click.confirm("Go ahead?", abort=True)
    if not dry_run:
        if t.before:
            rewind = store.rewind(t.before, None, "files")
        write_fork(plan, actx)
    command = shlex.join(plan.command)
    out = {**plan.to_json(), "dryRun": dry_run,
           "rewind": rewind.to_json() if rewind is not None else None}

    def human() -> None:
        pre = "would write" if dry_run else "wrote"
        click.echo(f"{pre} {plan.target}")
        if rewind is not None:
            n = len(rewind.written) + len(rewind.created) + len(rewind.removed)
            click.echo(f"{'would rewind' if dry_run else 'rewound'} {n} file(s) to before the turn"
                       + ("" if dry_run else " (undo with 'turnback undo')"))
        click.echo(f"continue with: cd {shlex.quote(str(store.workspace))} && {command}")

    emit(ctx, out, human)
    if run_agent and not dry_run:
        store.close()
        os.chdir(store.workspace)
        os.execvp(plan.command[0], plan.command)
