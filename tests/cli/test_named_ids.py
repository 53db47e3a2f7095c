"""`turnback checkpoints` and `turnback log` name the checkpoints that a safety
checkpoint's label and an operation give by id, as the editor does."""

from __future__ import annotations

from pathlib import Path

from wsutil import run_cli


def out(ws: Path, *args: str) -> str:
    return run_cli(ws, *args).stdout.decode()


def test_checkpoints_and_log_say_names_not_ids(ws: Path) -> None:
    (ws / "f.txt").write_text("one\n")
    run_cli(ws, "init")
    good = out(ws, "checkpoint", "-m", "Tests pass").split()[0]
    (ws / "f.txt").write_text("two\n")
    run_cli(ws, "checkpoint", "-m", "Later")
    run_cli(ws, "rewind", good)
    run_cli(ws, "undo")
    run_cli(ws, "undo")
    rows = out(ws, "checkpoints").splitlines()
    labels = [row.split("  ")[-1].strip() for row in rows]
    assert labels == ["Tests pass", "Later", "before rewind to “Tests pass”",
                      "before undo of rewind to “Tests pass”",
                      "before redo of rewind to “Tests pass”"], rows
    assert all(good not in row[12:] for row in rows), rows
    ids = [row.split()[0] for row in rows]
    log = out(ws, "log").splitlines()
    assert len(log) == 3
    assert f"to {good} “Tests pass”  safety {ids[2]}" in log[0]
    assert f"to {ids[2]} “before rewind to “Tests pass””  safety {ids[3]}" in log[1]
    assert f"to {ids[3]} “before undo of rewind to “Tests pass””  safety {ids[4]}" in log[2]
    # scripts read --json, which keeps the stored labels
    assert f"before rewind to {good}" in out(ws, "--json", "checkpoints")
