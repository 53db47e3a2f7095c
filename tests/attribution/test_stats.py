"""Lines added and removed per agent and by people, a rewind counted for no one."""

from __future__ import annotations

import json
from pathlib import Path

from turnback import Store
from turnback.attribution.history import load_history
from turnback.attribution.stats import by_author
from wsutil import run_cli

from .test_blame import Agent, lines


def test_lines_per_agent_and_people(store: Store, ws: Path) -> None:
    f = ws / "a.txt"
    f.write_text(lines("1"))
    store.checkpoint(label="start")
    claude, codex = Agent(store, "claude-code"), Agent(store, "codex")
    claude.turn("two lines", lambda: f.write_text(lines("1", "2", "3")))
    good = store.checkpoints()[-1].id
    f.write_text(lines("1", "2", "3", "4"))  # a person: +1
    codex.turn("rewrite", lambda: f.write_text(lines("x")))  # +1 -4
    store.rewind(good)  # back to three lines: counted for no one
    store.checkpoint(label="after the rewind")
    got = {s.author: (s.added, s.removed, s.turns) for s in by_author(store,
                                                                     load_history(store))}
    assert got == {"claude-code": (2, 0, 1), "people": (1, 0, 1), "codex": (1, 4, 1)}
    # the codex turn ended before this: only what came after counts
    later = by_author(store, load_history(store), since=9e12)
    assert later == []


def test_stats_cli(store: Store, ws: Path) -> None:
    (ws / "a.txt").write_text("1\n")
    store.checkpoint(label="start")
    Agent(store, "aider").turn("more", lambda: (ws / "a.txt").write_text("1\n2\n"))
    store.close()
    out = json.loads(run_cli(ws, "--json", "stats", "--by-agent").stdout)
    assert out["byAgent"] == [{"author": "aider", "linesAdded": 1, "linesRemoved": 0,
                               "fileChanges": 1, "turns": 1}]
    text = run_cli(ws, "stats", "--since", "2000-01-01").stdout.decode()
    assert text.startswith("aider") and "+1" in text
    bad = run_cli(ws, "stats", "--since", "yesterday", check=False)
    assert bad.returncode != 0 and b"is not a date" in bad.stderr
