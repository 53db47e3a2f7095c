"""Agent Trace export: a commit's added lines as records, each valid against the spec's schema
(read from ../shared/specs/agent-trace/, skipped when it is not beside the clone)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.attribution.gitcommit import read_commit
from turnback.attribution.history import load_history
from turnback.attribution.trace import trace_record
from turnback.events import Kind
from wsutil import run_cli

SCHEMA = Path(__file__).resolve().parents[2].parent / "shared" / "specs" / "agent-trace" / \
    "trace-record.json"


def validate(record: Any) -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"needs the Agent Trace schema at {SCHEMA} (not in this clone)")
    from jsonschema import Draft202012Validator, FormatChecker

    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    Draft202012Validator(schema, format_checker=FormatChecker()).validate(record)


def git(ws: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/bin:/bin", "HOME": str(ws), "GIT_CONFIG_GLOBAL": "/dev/null"}
    return subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True,
                          text=True).stdout


def _history(store: Store, ws: Path) -> None:
    git(ws, "init", "-q")
    git(ws, "config", "user.name", "t")  # the note's author, when the CLI adds one
    git(ws, "config", "user.email", "t@example.com")
    (ws / ".gitignore").write_text(".turnback/\n")
    (ws / "app.py").write_text("a = 1\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    store.checkpoint(label="start")
    sid = store.start_session(agent="claude-code", model="anthropic/claude-opus-4-5").id
    store.append(sid, Kind.PROMPT, {"text": "add b and c"})
    store.checkpoint(session_id=sid)
    store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
    (ws / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
    store.checkpoint(session_id=sid)
    (ws / "app.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\n")  # a person
    store.checkpoint(label="after")
    (ws / "app.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")  # never checkpointed
    git(ws, "commit", "-qam", "second")


def test_a_commits_lines_by_contributor(store: Store, ws: Path) -> None:
    _history(store, ws)
    record = trace_record(store, load_history(store), read_commit(ws, "HEAD"), "0.1.0")
    validate(record)
    (f,) = record["files"]
    assert f["path"] == "app.py"
    got = {c["contributor"]["type"]: (c["contributor"].get("model_id"), c["ranges"])
           for c in f["conversations"]}
    assert got == {
        "ai": ("anthropic/claude-opus-4-5", [{"start_line": 2, "end_line": 3}]),
        "human": (None, [{"start_line": 4, "end_line": 4}]),
        "unknown": (None, [{"start_line": 5, "end_line": 5}]),
    }
    (meta,) = record["metadata"]["dev.turnback"]["conversations"]
    assert meta["path"] == "app.py" and meta["turns"][0]["prompt"] == "add b and c"
    assert record["vcs"] == {"type": "git", "revision": git(ws, "rev-parse", "HEAD").strip()}


def test_trace_export_cli_and_the_note_off_by_default(store: Store, ws: Path) -> None:
    _history(store, ws)
    store.close()
    record = json.loads(run_cli(ws, "--json", "trace", "export").stdout)
    validate(record)
    assert subprocess.run(["git", "notes", "--ref", "agent-trace", "list"], cwd=ws,
                          capture_output=True, text=True).stdout == ""
    out = run_cli(ws, "trace", "export", "HEAD", "--note").stdout.decode()
    assert "app.py: ai (anthropic/claude-opus-4-5) 2, human 1, unknown 1" in out
    note = git(ws, "notes", "--ref", "agent-trace", "show", "HEAD")
    validate(json.loads(note))
    bad = run_cli(ws, "trace", "export", "no-such-commit", check=False)
    assert bad.returncode != 0 and b"git rev-parse" in bad.stderr
