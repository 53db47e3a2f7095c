"""Source name → importer: the list of SPEC's import sources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput
from . import (
    aider,
    checkpoint_json,
    claude_code,
    codex,
    event_records,
    live,
    meta_jsonl,
    ralph,
    snapshot_json,
    turnback_jsonl,
)
from .base import Context, DocumentParser, FileParser
from .live import WatchRoot


@dataclass(frozen=True)
class Source:
    name: str
    summary: str
    locate: Callable[[Context, Path | None], list[Path]]
    parser: Callable[[Path, Context], FileParser | DocumentParser]
    default: str  # where it looks without a PATH ("" = a PATH is needed)
    # The folders where it writes this workspace's sessions (live.py): set, the
    # source is followed live — imported on open, read again as its files grow.
    watch: Callable[[Context], list[WatchRoot]] | None = None

    @property
    def followable(self) -> bool:
        return self.watch is not None


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("claude-code", "Claude Code session transcripts (JSONL)", claude_code.locate,
               claude_code.ClaudeCodeParser,
               "~/.claude/projects/<encoded workspace>/ ($CLAUDE_CONFIG_DIR)",
               watch=live.claude_code_roots),
        Source("codex", "Codex CLI rollouts (JSONL)", codex.locate, codex.CodexParser,
               "~/.codex/sessions/**/rollout-*.jsonl ($CODEX_HOME)", watch=live.codex_roots),
        Source("aider", "aider chat history (Markdown)", aider.locate, aider.AiderParser,
               "<workspace>/.aider.chat.history.md", watch=live.aider_roots),
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


def get(name: object) -> Source:
    if not isinstance(name, str) or name not in SOURCES:
        raise InvalidInput(f"unknown import source {name!r}; known: {', '.join(SOURCES)}")
    return SOURCES[name]


def followable() -> list[str]:
    """The sources followed live, in registry order."""
    return [s.name for s in SOURCES.values() if s.followable]
