"""`turnback checkpoints` and `turnback log` name the checkpoints that a safety
checkpoint's label and an operation give by id, as the editor does."""

from __future__ import annotations

import json
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
    # an undo's event says what it undid; it said "undo (files)" for the undo and the redo
    sid = json.loads(out(ws, "--json", "session", "list", "--wait"))["sessions"][0]["id"]
    shown = out(ws, "session", "show", sid)
    assert "undo of rewind to “Tests pass” (files)" in shown, shown
    assert "redo of rewind to “Tests pass” (files)" in shown, shown


def test_checkpoints_json_says_safety_of_as_the_server_and_not_a_pulled_ones(ws: Path) -> None:
    """--json printed each record as stored: a pulled checkpoint kept another machine's
    ``safetyOf`` (an operation no undo here goes back to), and no record had its words."""
    (ws / "f.txt").write_text("one\n")
    run_cli(ws, "init")
    good = out(ws, "checkpoint", "-m", "Tests pass").split()[0]
    (ws / "f.txt").write_text("two\n")
    run_cli(ws, "rewind", good)
    listed = json.loads(out(ws, "--json", "checkpoints"))["checkpoints"]
    safety = next(c for c in listed if c["auto"])
    # the same record, as a pull from another machine stores it (sharing/: "origin")
    index = ws / ".turnback" / "checkpoints.jsonl"
    record = next(json.loads(line) for line in index.read_text().splitlines()
                  if json.loads(line).get("id") == safety["id"])
    pulled = {**record, "id": "f" * 64, "origin": "laptop-of-ana"}
    with index.open("a") as f:
        f.write(json.dumps(pulled) + "\n")
    by_id = {c["id"]: c for c in json.loads(out(ws, "--json", "checkpoints"))["checkpoints"]}
    assert by_id[safety["id"]]["safetyOf"] == {"op": "rewind", "checkpoint": good,
                                               "words": "before rewind to “Tests pass”"}
    assert by_id["f" * 64]["origin"] == "laptop-of-ana"
    assert "safetyOf" not in by_id["f" * 64], by_id["f" * 64]
    assert "safetyOf" not in by_id[good]


def test_the_servers_field_names_are_the_stores() -> None:
    from turnback.server.rpc import methods
    from turnback.store import safety_names

    assert (methods.SAFETY_OF, methods.SAFETY_WORDS) == (safety_names.SAFETY_OF,
                                                         safety_names.SAFETY_WORDS)
