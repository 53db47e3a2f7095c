"""``turnback continue TURN``: a fork of the agent's own session file, and its command."""

from __future__ import annotations

import json
from pathlib import Path

from wsutil import cli_env, run_cli, write_codex_rollout


def test_continue_codex_from_before_the_third_turn(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = "0199aaaa-bbbb-cccc-dddd-eeeeffff0001"
    day = home / ".codex" / "sessions" / "2025" / "01" / "02"
    day.mkdir(parents=True)
    source = day / f"rollout-2025-01-02T10-00-00-{sid}.jsonl"
    write_codex_rollout(source, sid)
    env = cli_env(HOME=str(home))
    run_cli(ws, "import", "codex", str(source), env=env)
    shown = json.loads(run_cli(ws, "session", "show", sid, "--json", env=env).stdout)
    prompts = [e["id"] for e in shown["events"] if e["kind"] == "prompt"]
    dry = json.loads(run_cli(ws, "continue", prompts[2], "--dry-run", "--json", env=env).stdout)
    assert dry["dryRun"] is True and not Path(dry["sessionFile"]).exists()
    refused = run_cli(ws, "continue", prompts[2], env=env, input=b"n\n", check=None)
    assert refused.returncode != 0 and not Path(dry["sessionFile"]).exists(), "asked first"
    done = json.loads(run_cli(ws, "continue", prompts[2], "--yes", "--json", env=env).stdout)
    fork = Path(done["sessionFile"])
    assert fork.parent == day and fork.exists()
    assert done["command"] == ["codex", "resume", done["sessionId"]]
    assert b"third ask" not in fork.read_bytes() and b"second ask" in fork.read_bytes()
    first = run_cli(ws, "continue", prompts[0], "--yes", env=env, check=None)
    assert first.returncode == 2 and b"first turn" in first.stderr
