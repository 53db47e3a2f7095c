"""Continue an agent from before a turn: a fork of the agent's own session file.

Claude Code and Codex resume a session from its file (``claude --resume ID``, ``codex
resume ID``). To let a person continue from an earlier turn, the agent needs a session
file that ends before that turn: the original file's lines up to the line that opens the
turn, with a new session id, written beside the original. Which line that is, is
decided by the same parser the import used — the line whose reading yields the turn's
prompt event — so the fork holds exactly the turns before the chosen one, as the
importer sees them.

The original is never changed; the fork is a new file (created exclusively: an existing
file is never overwritten). Other agents cannot be continued this way: docs/IMPORT.md
says why.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import InvalidInput, NotFound
from ..events import check_id
from ..fs.osflags import O_BINARY, O_NOFOLLOW
from ..models import Problem
from ..sessions.turns import opens_turn
from .agents.claude_code import ClaudeCodeParser, encode_project_dir
from .agents.codex import CodexParser
from .base import Context, EventRecord, FileParser, RawLine, SkippedLine, iter_raw_lines
from .inputs import find

RESUME = {"claude-code": ["claude", "--resume"], "codex": ["codex", "resume"]}
CONTINUABLE = tuple(RESUME)


@dataclass(slots=True)
class ForkPlan:
    agent: str
    source: Path  # the agent's own session file
    cut: int  # bytes of it the fork keeps
    lines: int  # lines kept
    new_id: str
    target: Path  # the fork's path (does not exist yet)

    @property
    def command(self) -> list[str]:
        return [*RESUME[self.agent], self.new_id]

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "source": str(self.source), "lines": self.lines,
                "sessionId": self.new_id, "sessionFile": str(self.target),
                "command": self.command}


def _parser(agent: str, path: Path, ctx: Context) -> FileParser:
    if agent == "claude-code":
        return ClaudeCodeParser(path, ctx)
    if agent == "codex":
        return CodexParser(path, ctx)
    raise InvalidInput(f"a {agent} session cannot be continued by its agent: only "
                       f"{', '.join(CONTINUABLE)} sessions can (docs/IMPORT.md says why)")


def find_session_file(agent: str, session_id: str, ctx: Context) -> Path:
    """The agent's own file of ``session_id`` (Claude Code: this workspace's project folder
    first, then every project; Codex: the rollout named with the id)."""
    check_id(session_id, "session id")
    if agent == "claude-code":
        projects = ctx.claude_dir / "projects"
        here = projects / encode_project_dir(str(ctx.workspace)) / f"{session_id}.jsonl"
        if here.is_file() and not here.is_symlink():
            return here
        for f in find(projects, "*", f"{session_id}.jsonl"):
            return f
        raise NotFound(f"Claude Code's file of session {session_id!r} is not in {projects}: "
                       "it may have been deleted, or imported from another machine")
    if agent == "codex":
        root = ctx.codex_dir / "sessions"
        for f in find(root, "**", "rollout-*.jsonl"):
            if f.stem.endswith(session_id):
                return f
        raise NotFound(f"Codex's rollout of session {session_id!r} is not under {root}")
    _parser(agent, Path(), ctx)
    raise AssertionError("unreachable")


def _lines(path: Path, ctx: Context) -> Iterator[RawLine]:
    for item in iter_raw_lines(path, limit=ctx.max_line):
        if isinstance(item, (SkippedLine, Problem)):
            continue
        yield item


def plan_fork(agent: str, source: Path, prompt_id: str, ctx: Context) -> ForkPlan:
    """Where the turn opened by ``prompt_id`` starts in ``source``, and the fork to write."""
    parser = _parser(agent, source, ctx)
    kept = 0
    prompts = 0
    for line in _lines(source, ctx):
        for rec in parser.feed(line):
            if not isinstance(rec, EventRecord):
                continue
            if rec.event.id != prompt_id:
                prompts += opens_turn(rec.event)
                continue
            if prompts == 0:
                raise InvalidInput("that is the session's first turn: there is nothing "
                                   "before it to continue from; start the agent afresh")
            new_id = str(uuid.uuid4())
            return ForkPlan(agent, source, line.offset, kept, new_id,
                            _target(agent, source, new_id))
        kept += 1
    raise NotFound(f"the turn {prompt_id!r} is not in {source}: the file may have changed "
                   "since it was imported")


def _target(agent: str, source: Path, new_id: str) -> Path:
    if agent == "claude-code":
        return source.parent / f"{new_id}.jsonl"
    # Codex finds a rollout by the id at the end of its name: rollout-<time>-<id>.jsonl
    stem = source.stem.removeprefix("rollout-")
    stamp = stem[: len("2025-01-01T00-00-00")] if len(stem) > 19 else "fork"
    return source.parent / f"rollout-{stamp}-{new_id}.jsonl"


def _rewrite(agent: str, obj: Any, new_id: str) -> Any:
    """The line with the fork's session id where the agent keeps it."""
    if not isinstance(obj, dict):
        return obj
    if agent == "claude-code":
        if isinstance(obj.get("sessionId"), str):
            obj["sessionId"] = new_id
    elif obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
        obj["payload"]["id"] = new_id
    return obj


def write_fork(plan: ForkPlan, ctx: Context) -> Path:
    """Write the fork: the kept lines, with the new session id; never over a file."""
    out: list[bytes] = []
    for line in _lines(plan.source, ctx):
        if line.offset >= plan.cut:
            break
        text = line.data.strip()
        if not text:
            continue
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            out.append(text)  # kept as it was: the agent skips what it cannot read too
            continue
        out.append(orjson.dumps(_rewrite(plan.agent, obj, plan.new_id)))
    data = b"\n".join(out) + b"\n"
    fd = os.open(plan.target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY,
                 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(plan.target)
        raise
    return plan.target
