"""What the store found and set aside is said on stderr once for each cause (trust19): a
log it refuses (only ``fsck`` named it) and a repair of ``checkpoints.jsonl`` at the open.
On main a command said nothing of either."""

from __future__ import annotations

import json
from pathlib import Path

from wsutil import REFUSED_LOG, plant_refused_log, run_cli


def _stderr(ws: Path, *args: str) -> str:
    return run_cli(ws, *args).stderr.decode()


def test_a_refused_log_is_named_once_with_what_to_do(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    run_cli(ws, "checkpoint")
    plant_refused_log(ws)
    first = _stderr(ws, "status")
    assert REFUSED_LOG in first and "turnback fsck" in first, first
    assert REFUSED_LOG not in _stderr(ws, "checkpoints")  # told once, not at each command
    assert REFUSED_LOG not in _stderr(ws, "status")
    fsck = run_cli(ws, "fsck", check=None).stdout.decode()
    assert REFUSED_LOG in fsck  # fsck still names it, every time


def test_a_repair_of_the_checkpoint_file_at_the_open_is_said_once(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    run_cli(ws, "checkpoint")
    (ws / "a.txt").write_text("b\n")
    run_cli(ws, "checkpoint")
    index = ws / ".turnback" / "checkpoints.jsonl"
    lines = index.read_bytes().splitlines(keepends=True)
    # a page of zeros a power cut left where the last line was: read as damage
    index.write_bytes(b"".join(lines[:-1]) + b"\0" * 64 + b"\n")
    first = _stderr(ws, "status")
    assert "was damaged" in first and "put back" in first and "turnback fsck" in first, first
    assert "was damaged" not in _stderr(ws, "status")
    assert len(json.loads(run_cli(ws, "--json", "checkpoints").stdout)["checkpoints"]) == 2


def _planted(ws: Path) -> None:
    """A store with one checkpoint and a refused log planted in it."""
    (ws / "a.txt").write_text("a\n")
    run_cli(ws, "init")
    run_cli(ws, "checkpoint", "-m", "first")
    plant_refused_log(ws)


def test_the_fast_path_tells_it_once_as_click_does(ws: Path) -> None:
    """``turnback checkpoint`` / ``rewind`` / ``undo`` without a terminal run in-process
    without click (``cli/direct.py``): they said nothing of it (trust21)."""
    _planted(ws)
    first = _stderr(ws, "checkpoint", "-m", "second")
    assert first.count(REFUSED_LOG) == 1 and "turnback fsck" in first, first
    assert REFUSED_LOG not in _stderr(ws, "checkpoint", "-m", "third")
    assert REFUSED_LOG not in _stderr(ws, "status"), "told once for the CLI, whichever path"
    assert REFUSED_LOG not in _stderr(ws, "rewind", "latest~1")


def test_a_dry_run_on_the_fast_path_tells_it_too(ws: Path) -> None:
    _planted(ws)
    (ws / "a.txt").write_text("b\n")
    proc = run_cli(ws, "rewind", "latest", "--dry-run")
    assert REFUSED_LOG in proc.stderr.decode() and b"a.txt" in proc.stdout


def test_an_agents_hook_tells_it_on_stderr_only(ws: Path) -> None:
    """The hook (``cli/hook_cmd.py``) opens the store itself; its stdout is the agent's."""
    _planted(ws)
    payload = {"session_id": "s-1", "cwd": str(ws), "hook_event_name": "Stop",
               "transcript_path": str(ws / "none.jsonl")}
    proc = run_cli(ws, "hook", "claude-code", "Stop", input=json.dumps(payload).encode())
    assert proc.stdout == b"" and REFUSED_LOG in proc.stderr.decode()
    again = run_cli(ws, "hook", "claude-code", "Stop", input=json.dumps(payload).encode())
    assert again.stderr == b""
