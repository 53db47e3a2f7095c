"""The group's options after the verb: ``turnback checkpoint -m x --json``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from turnback.cli.main import cli
from wsutil import run_cli


def test_json_after_the_verb(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    run_cli(ws, "init")
    cp = json.loads(run_cli(ws, "checkpoint", "-m", "x", "--json").stdout)
    assert cp["label"] == "x"
    sessions = json.loads(run_cli(ws, "session", "list", "--json").stdout)
    sid = sessions["sessions"][0]["id"]
    shown = json.loads(run_cli(ws, "session", "show", sid, "--json").stdout)
    assert shown["session"]["id"] == sid if "session" in shown else shown["id"] == sid


def test_workspace_and_store_after_the_verb(ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_cli(elsewhere, "init", "-C", str(ws))
    assert (ws / ".turnback").is_dir() and not (elsewhere / ".turnback").exists()
    out = json.loads(run_cli(elsewhere, "checkpoints", "--json", "-C", str(ws)).stdout)
    assert out["checkpoints"] == []
    store = tmp_path / "store"
    run_cli(ws, "checkpoint", "--store", str(store), "-m", "s")
    assert (store / "config.json").exists()


def test_import_accepts_json_after_the_verb(ws: Path) -> None:
    (ws / "h.md").write_text("# aider chat started at 2025-01-01 10:00:00\n\n#### hi\n")
    out = json.loads(run_cli(ws, "import", "aider", "h.md", "--json", env=None).stdout)
    assert out["sessions"], out


def test_global_options_stay_out_of_each_verbs_help() -> None:
    res = CliRunner().invoke(cli, ["checkpoint", "--help"])
    assert res.exit_code == 0 and "--json" not in res.output
    top = CliRunner().invoke(cli, ["--help"])
    assert "--json" in top.output
