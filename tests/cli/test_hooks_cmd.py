"""`turnback hooks` and `turnback hook`: the agent's hook checkpoints, bounded, never failing it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from turnback import Store
from wsutil import cli_env, run_cli


def checkpoints(ws: Path) -> list[dict[str, object]]:
    out = json.loads(run_cli(ws, "--json", "checkpoints").stdout)
    return list(out["checkpoints"])


def test_install_status_uninstall_with_the_users_hooks(ws: Path) -> None:
    f = ws / ".claude" / "settings.local.json"
    f.parent.mkdir()
    user = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    f.write_text(json.dumps(user, indent=2) + "\n")
    out = run_cli(ws, "hooks", "install", "claude-code").stdout.decode()
    assert "claude-code: installed in .claude/settings.local.json" in out
    status = json.loads(run_cli(ws, "--json", "hooks", "status").stdout)["hooks"]
    assert [(s["agent"], s["installed"]) for s in status] == [
        ("claude-code", True), ("gemini-cli", False), ("codex", False)]
    assert "already in" in run_cli(ws, "hooks", "install", "claude-code").stdout.decode()
    run_cli(ws, "hooks", "uninstall")
    assert json.loads(f.read_text()) == user
    bad = run_cli(ws, "hooks", "install", "no-such-agent", check=None)
    assert bad.returncode != 0
    assert b"agents with hooks: claude-code, gemini-cli, codex" in bad.stderr


def test_claude_code_prompt_hook_checkpoints_in_the_session(ws: Path) -> None:
    payload = {"session_id": "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
               "transcript_path": str(ws / "t.jsonl"), "cwd": str(ws),
               "hook_event_name": "UserPromptSubmit", "permission_mode": "default",
               "prompt": "add a --verbose flag"}
    transcript = ws.parent / "t.jsonl"  # Claude Code wrote the prompt's line just before
    transcript.write_text(json.dumps({
        "type": "user", "uuid": "u1", "parentUuid": None, "sessionId": payload["session_id"],
        "cwd": str(ws), "timestamp": "2026-11-20T09:00:00.000Z",
        "message": {"role": "user", "content": "add a --verbose flag"}}) + "\n")
    payload["transcript_path"] = str(transcript)
    (ws / "edited.txt").write_text("before the agent\n")
    (ws / "pkg").mkdir()  # the agent's shell may be in a subfolder; the hook names the cwd
    proc = run_cli(ws / "pkg", "hook", "claude-code", "UserPromptSubmit",
                   input=json.dumps(payload).encode())
    # stdout of a UserPromptSubmit hook goes into the model's context: nothing there
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (cp,) = checkpoints(ws)
    assert cp["label"] == "new turn: add a --verbose flag" and cp["auto"] is True
    assert cp["sessionId"] == payload["session_id"]
    store = Store.open(ws)
    session = store.session(payload["session_id"])
    # the session met for the first time was imported from its transcript, as following would
    assert session.header.agent == "claude-code" and session.header.title == "add a --verbose flag"
    assert session.header.started.startswith("2026-11-20T09:00")
    assert session.events[0].id == "u1"
    store.close()
    stop = {**payload, "hook_event_name": "Stop", "stop_hook_active": False}
    del stop["prompt"]
    run_cli(ws, "hook", "claude-code", "Stop", input=json.dumps(stop).encode())
    assert [c["label"] for c in checkpoints(ws)][-1] == "end of turn"


def test_gemini_prints_json_and_codex_takes_its_argument(ws: Path) -> None:
    g = run_cli(ws, "hook", "gemini-cli", "BeforeAgent", input=json.dumps(
        {"session_id": "g-1", "cwd": str(ws), "hook_event_name": "BeforeAgent",
         "prompt": "hi", "timestamp": "2026-01-01T00:00:00Z"}).encode())
    assert json.loads(g.stdout) == {}  # Gemini CLI parses its hooks' stdout as JSON
    notify = json.dumps({"type": "agent-turn-complete", "thread-id": "0199aaaa-1",
                         "turn-id": "1", "cwd": str(ws), "input-messages": ["go"],
                         "last-assistant-message": "done"})
    run_cli(ws, "hook", "codex", "notify", notify)
    labels = [(c["label"], c["sessionId"]) for c in checkpoints(ws)]
    assert labels == [("new turn: hi", "g-1"), ("end of turn", "0199aaaa-1")]


def test_a_bad_input_never_fails_the_agent(ws: Path) -> None:
    for agent, event, data in (("claude-code", "Stop", b"{not json"),
                               ("claude-code", "PreToolUse", b'{"hook_event_name": "X"}'),
                               ("no-such-agent", "Stop", b"{}")):
        proc = run_cli(ws, "hook", agent, event, input=data)
        assert proc.returncode == 0 and proc.stdout == b"", (agent, proc)
        assert proc.stderr.startswith(b"turnback hook: "), proc.stderr
    assert not (ws / ".turnback").exists() or checkpoints(ws) == []


def test_a_hook_that_cannot_finish_returns_in_bounded_time(ws: Path) -> None:
    # stdin that never ends: the hook gives up after TURNBACK_HOOK_TIMEOUT and exits 0
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "turnback.cli.main", "hook", "claude-code", "Stop"], cwd=ws,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=cli_env(TURNBACK_HOOK_TIMEOUT="0.5"))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.wait(timeout=60)  # stdin stays open all along
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == 0 and out == b""
    assert b"no checkpoint within 0.5 s" in err
    assert time.monotonic() - t0 < 30
