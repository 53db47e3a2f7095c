"""Source name → importer: the list of SPEC's import sources."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput, TurnbackError
from ..fs.paths import expand_home
from . import live
from .agents import (
    aider,
    claude_code,
    cline,
    codex,
    continue_dev,
    copilot_chat,
    copilot_cli,
    crush,
    gemini,
    opencode,
)
from .base import Context, DocumentParser, FileParser
from .formats import (
    checkpoint_json,
    event_records,
    meta_jsonl,
    ralph,
    snapshot_json,
    turnback_jsonl,
)
from .live import WatchRoot
from .matching import Matching


@dataclass(frozen=True)
class Source:
    name: str
    summary: str
    locate: Callable[[Context, Path | None], list[Path]]
    parser: Callable[[Path, Context], FileParser | DocumentParser]
    default: str  # where it looks without a PATH ("" = a PATH is needed)
    agent: bool = False  # an agent's own sessions, found by ``discover`` (not a seed format)
    # The folders where it writes this workspace's sessions (live.py): set, the
    # source is followed live — imported on open, read again as its files grow.
    watch: Callable[[Context], list[WatchRoot]] | None = None
    # Sessions of every project in one folder (matching.py): a follower told that one
    # input there changed asks whether that input is this workspace's, not ``locate``.
    matching: Matching | None = None

    @property
    def followable(self) -> bool:
        return self.watch is not None


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("claude-code", "Claude Code session transcripts (JSONL)", claude_code.locate,
               claude_code.ClaudeCodeParser,
               "~/.claude/projects/<encoded workspace>/ ($CLAUDE_CONFIG_DIR)",
               watch=live.claude_code_roots, agent=True),
        Source("codex", "Codex CLI rollouts (JSONL)", codex.locate, codex.CodexParser,
               "~/.codex/sessions/**/rollout-*.jsonl ($CODEX_HOME)", watch=live.codex_roots,
               agent=True, matching=codex.MATCHING),
        Source("aider", "aider chat history (Markdown)", aider.locate, aider.AiderParser,
               "<workspace>/.aider.chat.history.md", watch=live.aider_roots,
               agent=True),
        Source("gemini-cli", "Gemini CLI chats (JSON, JSONL)", gemini.locate_gemini,
               gemini.GeminiParser, "~/.gemini/tmp/<project hash or name>/chats/",
               watch=live.gemini_roots, agent=True),
        Source("qwen-code", "Qwen Code chats (Gemini CLI's format)", gemini.locate_qwen,
               gemini.QwenParser, "~/.qwen/tmp/<project hash>/chats/",
               watch=live.qwen_roots, agent=True),
        Source("cline", "Cline task folders", cline.make_locate("cline"), cline.ClineParser,
               "<editor>/User/globalStorage/saoudrizwan.claude-dev/tasks/*/",
               watch=live.cline_roots, agent=True,
               matching=cline.matching("cline")),
        Source("roo-code", "Roo Code task folders", cline.make_locate("roo-code"),
               cline.RooParser, "<editor>/User/globalStorage/rooveterinaryinc.roo-cline/tasks/*/",
               watch=live.roo_code_roots, agent=True,
               matching=cline.matching("roo-code")),
        Source("kilo-code", "Kilo Code task folders", cline.make_locate("kilo-code"),
               cline.KiloParser, "<editor>/User/globalStorage/kilocode.kilo-code/tasks/*/",
               watch=live.kilo_code_roots, agent=True,
               matching=cline.matching("kilo-code")),
        Source("crush", "Crush sessions and file versions (SQLite)", crush.make_locate("crush"),
               crush.CrushParser, "<workspace>/.crush/crush.db",
               watch=live.crush_roots, agent=True),
        Source("opencode-go", "OpenCode (Go) sessions and file versions (SQLite)",
               crush.make_locate("opencode-go"), crush.OpenCodeGoParser,
               "<workspace>/.opencode/opencode.db", watch=live.opencode_go_roots,
               agent=True),
        Source("copilot-cli", "GitHub Copilot CLI sessions (JSON)", copilot_cli.locate,
               copilot_cli.CopilotCliParser, "~/.copilot/history-session-state/*.json",
               watch=live.copilot_cli_roots, agent=True, matching=copilot_cli.MATCHING),
        Source("opencode", "OpenCode sessions (JSON storage; documented format)",
               opencode.locate, opencode.OpenCodeParser,
               "~/.local/share/opencode/storage/session/*/*.json ($XDG_DATA_HOME)",
               watch=live.opencode_roots, agent=True, matching=opencode.MATCHING),
        Source("copilot-chat", "Copilot Chat sessions in VS Code (documented format)",
               copilot_chat.locate, copilot_chat.CopilotChatParser,
               "<editor>/User/workspaceStorage/<hash>/chatSessions/*.json",
               watch=live.copilot_chat_roots, agent=True),
        Source("continue", "Continue sessions (documented format)", continue_dev.locate,
               continue_dev.ContinueParser, "~/.continue/sessions/*.json ($CONTINUE_GLOBAL_DIR)",
               watch=live.continue_roots, agent=True, matching=continue_dev.MATCHING),
        Source("ralph", "loop history JSONL (seed 000)", ralph.locate, ralph.RalphParser,
               "<workspace>/.ralph/history.jsonl"),
        Source("checkpoint-json", "checkpoint JSON files with file diffs (seed 001)",
               checkpoint_json.locate, checkpoint_json.CheckpointJsonParser, ""),
        Source("event-records", "event-record session JSONL with parent ids (seed 002)",
               event_records.locate, event_records.EventRecordsParser, ""),
        Source("meta-jsonl", "JSONL with a meta header line (seed 003)", meta_jsonl.locate,
               meta_jsonl.MetaJsonlParser, ""),
        Source("snapshot-json", "whole-conversation snapshot JSON (seed 004)",
               snapshot_json.locate, snapshot_json.SnapshotJsonParser, ""),
        Source("turnback", "Turnback's own JSONL export", turnback_jsonl.locate,
               turnback_jsonl.TurnbackParser, ""),
    )
}


@dataclass(frozen=True)
class Found:
    """One input of this workspace's sessions: what ``discover`` hands a follower or the UI."""

    source: str
    path: Path  # a file, or a folder the source reads as one session (a Cline task)
    followable: bool  # followed live: its source has watch roots (live.py)
    watch: tuple[Path, ...]  # the files whose change re-reads it (live.input_files)


def discover(workspace: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None,
             env: Mapping[str, str] | None = None,
             sources: Iterable[str] | None = None) -> list[Found]:
    """Every agent session of ``workspace`` on this machine, from every agent source
    (or from ``sources``); ``home`` and ``env`` stand in for the user's (tests)."""
    ctx = Context(workspace=Path(workspace).absolute(),
                  home=expand_home(home) if home is not None else Path.home(),
                  env=dict(os.environ if env is None else env))
    return discover_in(ctx, sources)


def discover_in(ctx: Context, sources: Iterable[str] | None = None) -> list[Found]:
    """Every agent session of ``ctx.workspace`` on this machine, from every agent source.

    The one place that knows where each agent keeps its sessions: the live follower
    and "import sessions found here" call it. A source that fails to look (an
    unreadable folder) finds nothing rather than stopping the others.
    """
    names = [get(n).name for n in sources] if sources is not None else [
        s.name for s in SOURCES.values() if s.agent]
    return [Found(name, p, SOURCES[name].followable, live.input_files(p))
            for name, paths in located(ctx, names) for p in paths]


def located(ctx: Context, names: Iterable[str]) -> Iterator[tuple[str, list[Path]]]:
    """Each named source with what its ``locate`` finds for ``ctx.workspace`` in its usual
    place (not listed: nothing found). A source that fails to look (an unreadable
    folder) finds nothing rather than stopping the others; the import itself says why."""
    for name in names:
        try:
            paths = SOURCES[name].locate(ctx, None)
        except (OSError, TurnbackError):
            continue
        if paths:
            yield name, paths


def get(name: object) -> Source:
    if not isinstance(name, str) or name not in SOURCES:
        raise InvalidInput(f"unknown import source {name!r}; known: {', '.join(SOURCES)}")
    return SOURCES[name]


def followable() -> list[str]:
    """The sources followed live, in registry order."""
    return [s.name for s in SOURCES.values() if s.followable]
