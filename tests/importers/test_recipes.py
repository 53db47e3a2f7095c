"""The recipes of docs/IMPORT.md, run as written: hook commands the way Claude Code runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.importers.agents.claude_code import encode_project_dir

from .conftest import REPO

DOC = REPO / "docs" / "IMPORT.md"
BIN = Path(sys.executable).parent  # the venv's bin: holds the `turnback` command


def recipe(name: str) -> str:
    """The fenced block that follows ``<!-- recipe: NAME -->`` in docs/IMPORT.md."""
    text = DOC.read_text()
    m = re.search(rf"<!-- recipe: {re.escape(name)} -->\n```\w*\n(.*?)\n```", text, re.S)
    assert m, f"no recipe {name!r} in {DOC}"
    return m.group(1)


def hook_commands(name: str) -> dict[str, list[str]]:
    settings = json.loads(recipe(name))
    return {event: [h["command"] for group in groups for h in group["hooks"]]
            for event, groups in settings["hooks"].items()}


def env_for(ws: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURNBACK_", "CLAUDE_"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HOME=str(home),
               CLAUDE_PROJECT_DIR=str(ws))
    return env


def run_hook(command: str, hook: dict[str, Any] | bytes, ws: Path, home: Path,
             ) -> subprocess.CompletedProcess[bytes]:
    """As Claude Code does: through the shell, in the project folder, the JSON on stdin."""
    data = hook if isinstance(hook, bytes) else json.dumps(hook).encode()
    return subprocess.run(["sh", "-c", command], input=data, cwd=ws, env=env_for(ws, home),
                          capture_output=True, timeout=120, check=False)


def transcript_line(ws: Path, sid: str, **obj: Any) -> str:
    base = {"sessionId": sid, "cwd": str(ws), "timestamp": "2026-01-01T00:00:00.000Z"}
    return json.dumps({**base, **obj}) + "\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_claude_code_hooks_import_and_checkpoint_every_prompt(ws: Path, home: Path) -> None:
    hooks = hook_commands("claude-code-import")
    sid = "5e55e55e-0000-4000-8000-000000000001"
    transcript = home / ".claude" / "projects" / encode_project_dir(str(ws)) / f"{sid}.jsonl"
    (ws / "a.txt").write_text("v1\n")
    common = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(ws),
              "permission_mode": "default"}

    def submit(prompt: str) -> None:
        for command in hooks["UserPromptSubmit"]:
            done = run_hook(command, {**common, "hook_event_name": "UserPromptSubmit",
                                      "prompt": prompt}, ws, home)
            assert (done.returncode, done.stdout) == (0, b""), done.stderr

    submit("first: make a.txt say v2")  # Claude Code has not written the transcript yet
    transcript.parent.mkdir(parents=True)
    transcript.write_text(
        transcript_line(ws, sid, type="user", uuid="u1", parentUuid=None,
                        message={"role": "user", "content": "first: make a.txt say v2"})
        + transcript_line(ws, sid, type="assistant", uuid="a1", parentUuid="u1", message={
            "id": "m1", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                         "input": {"command": "echo v2 > a.txt"}}],
            "usage": {"input_tokens": 5, "output_tokens": 9}})
        + transcript_line(ws, sid, type="user", uuid="u2", parentUuid="a1", message={
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                         "content": ""}]})
    )
    (ws / "a.txt").write_text("v2\n")  # what the shell command did
    for command in hooks["Stop"]:
        done = run_hook(command, {**common, "hook_event_name": "Stop",
                                  "stop_hook_active": False}, ws, home)
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
    submit("second: now v3")
    (ws / "a.txt").write_text("v3\n")

    store = Store.open(ws)
    first, second = store.checkpoints(sid)
    assert first.label == "before prompt: first: make a.txt say v2"
    assert second.label == "before prompt: second: now v3"
    assert store.read_file(first.id, "a.txt") == b"v1\n"
    assert store.read_file(second.id, "a.txt") == b"v2\n"
    stats = store.stats(sid)
    assert (stats["prompts"], stats["toolCalls"], stats["toolResults"]) == (1, 1, 1)
    assert stats["tokens"]["output"] == 9
    store.rewind(first.id)
    assert (ws / "a.txt").read_text() == "v1\n"

    # A broken hook input never blocks the agent: exit 0, nothing on stdout, a message on stderr.
    done = run_hook(hooks["UserPromptSubmit"][0], b"not json", ws, home)
    assert (done.returncode, done.stdout) == (0, b"")
    assert b"--from-hook" in done.stderr


def test_claude_code_hooks_with_the_plain_verbs(ws: Path, home: Path) -> None:
    hooks = hook_commands("claude-code-verbs")
    (ws / "a.txt").write_text("v1\n")
    common = {"session_id": "s-9", "transcript_path": "/nowhere.jsonl", "cwd": str(ws)}
    for command in hooks["UserPromptSubmit"]:
        done = run_hook(command, {**common, "hook_event_name": "UserPromptSubmit",
                                  "prompt": "go"}, ws, home)
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
    (ws / "a.txt").write_text("v2\n")
    for command in hooks["Stop"]:
        done = run_hook(command, {**common, "hook_event_name": "Stop",
                                  "stop_hook_active": False}, ws, home)
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
    store = Store.open(ws)
    (cp,) = store.checkpoints("workspace")
    assert cp.label == "before prompt" and store.read_file(cp.id, "a.txt") == b"v1\n"
    note = store.session("workspace").events[-1]
    assert note.kind == "note" and note.data["session_id"] == "s-9"
    assert note.data["hook_event_name"] == "Stop"


def test_loop_through_the_cli(ws: Path, home: Path) -> None:
    done = subprocess.run(["sh", "-c", recipe("loop-cli")], cwd=ws, env=env_for(ws, home),
                          capture_output=True, timeout=300, check=False)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    store = Store.open(ws)
    stats = store.stats("fix-tests-1")
    assert (stats["iterations"], stats["toolCalls"], stats["toolResults"]) == (2, 2, 2)
    assert (stats["checkpoints"], stats["completion"]) == (2, "tests pass")
    assert store.session("fix-tests-1").header.ended
    second = store.checkpoints("fix-tests-1")[1]
    assert store.read_file(second.id, "notes.txt") == b"change 1\n"


def test_loop_through_the_python_api(ws: Path, home: Path) -> None:
    done = subprocess.run([sys.executable, "-c", recipe("loop-python")], cwd=ws,
                          env=env_for(ws, home), capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    store = Store.open(ws)
    stats = store.stats("fix-tests-2")
    assert (stats["iterations"], stats["checkpoints"], stats["tokens"]["output"]) == (2, 2, 40)
    second = next(c for c in store.checkpoints("fix-tests-2")
                  if c.label == "before iteration 2")
    store.rewind(second.id)
    assert (ws / "notes.txt").read_text() == "change 1\n"
