"""``turnback import`` and ``turnback export`` as a person or a script runs them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from turnback import Store
from turnback.cli.main import cli

from .conftest import TRANSCRIPTS, need_transcripts

SHORT = TRANSCRIPTS / "claude-code/marot+spotter/short.jsonl"
SID = "55604662-cf2a-4331-851a-ec234028f8ca"


def run(ws: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["-C", str(ws), *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_import_prints_what_it_added_and_json_for_scripts(ws: Path) -> None:
    need_transcripts()
    code, out, _ = run(ws, "import", "claude-code", str(SHORT))
    assert code == 0 and out == "imported 16 new events, 0 checkpoints, 1 sessions from 1 files\n"
    code, out, _ = run(ws, "--json", "import", "claude-code", str(SHORT))
    assert code == 0
    result = json.loads(out)
    assert (result["sessions"], result["events"], result["problems"]) == ([SID], 0, [])


def test_import_reports_bad_lines_on_stderr_and_goes_on(ws: Path, tmp_path: Path) -> None:
    need_transcripts()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(SHORT.read_bytes().replace(b"\n", b"\nnot json\n", 1))
    code, out, err = run(ws, "import", "claude-code", str(bad))
    assert code == 0
    assert err.startswith(f"turnback: {bad}:2: not valid JSON (")
    assert err.endswith("; line skipped\n") and err.count("\n") == 1
    assert out.startswith("imported 16 new events")


def test_import_usage_errors_exit_2_and_failures_1(ws: Path, tmp_path: Path) -> None:
    code, _, err = run(ws, "import", "nope")
    assert code == 2 and "'nope' is not one of" in err
    code, _, err = run(ws, "import", "event-records")
    assert code == 2 and "needs a PATH" in err
    code, _, err = run(ws, "import", "codex", str(tmp_path / "missing"))
    assert code == 1 and "does not exist" in err
    code, _, err = run(ws, "import", "codex", "--from-hook", stdin="{}")
    assert code == 2 and "--from-hook works with claude-code" in err


def test_export_jsonl_and_markdown(ws: Path, tmp_path: Path) -> None:
    need_transcripts()
    run(ws, "import", "claude-code", str(SHORT))
    code, out, _ = run(ws, "export", SID)
    assert code == 0
    lines = out.splitlines()
    assert json.loads(lines[0])["type"] == "session" and len(lines) == 17
    target = tmp_path / "out" / "s.md"
    target.parent.mkdir()
    code, _, err = run(ws, "export", SID, "--format", "markdown", "-o", str(target))
    assert code == 0 and err.startswith("wrote ")
    assert target.read_text().startswith("# mix phx.server doesnt seem to start")
    code, _, err = run(ws, "export", "no-such-session")
    assert code == 1 and "no session 'no-such-session'" in err


def test_export_then_import_into_another_workspace(ws: Path, tmp_path: Path) -> None:
    need_transcripts()
    run(ws, "import", "claude-code", str(SHORT))
    out = tmp_path / "s.jsonl"
    assert run(ws, "export", SID, "-o", str(out))[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    code, stdout, _ = run(other, "--json", "import", "turnback", str(out))
    assert code == 0 and json.loads(stdout)["events"] == 16
    assert Store.open(other).stats(SID) == Store.open(ws).stats(SID)


def test_import_says_where_it_looked_when_it_found_nothing(ws: Path) -> None:
    code, out, err = run(ws, "import", "claude-code")
    assert code == 0 and out.startswith("imported 0 new events")
    assert "no claude-code sessions of this workspace found in ~/.claude/projects/" in err


def test_another_tools_file_is_refused_naming_its_source(ws: Path) -> None:
    need_transcripts()
    rollout = TRANSCRIPTS / "codex/kvsankar+agent-history/session-01.jsonl"
    code, _, err = run(ws, "import", "claude-code", str(rollout))
    assert code != 0
    assert "looks like a Codex rollout" in err and "turnback import codex" in err
    for source, path in (("codex", SHORT),
                         ("aider", TRANSCRIPTS / "crush/jsanchezdaza+conecta4/crush.db"),
                         ("claude-code", TRANSCRIPTS / "gemini-cli/Mai0313+VibeCodingTracker/"
                                                       "test_conversation_gemini.json")):
        code, _, err = run(ws, "import", source, str(path))
        assert code != 0 and "looks like" in err, (source, err)
    store = Store.open(ws)
    try:
        assert store.sessions()[1] == 0  # nothing was imported
    finally:
        store.close()


def test_discover_lists_and_import_all_imports_every_agent(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (ws / ".aider.chat.history.md").write_text(
        "\n# aider chat started at 2025-01-02 03:04:05\n\n#### hello  \n\nHi.\n\n")
    rollouts = home / ".codex" / "sessions" / "2026" / "01" / "01"
    rollouts.mkdir(parents=True)
    (rollouts / "rollout-x.jsonl").write_text(json.dumps(
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
         "payload": {"id": "cx-1", "cwd": str(ws)}}) + "\n")
    code, out, _ = run(ws, "--json", "import", "all", "--discover", "--home", str(home))
    assert code == 0
    found = json.loads(out)["found"]
    assert sorted(f["source"] for f in found) == ["aider", "codex"]
    code, out, _ = run(ws, "--json", "import", "all", "--home", str(home))
    assert code == 0
    result = json.loads(out)
    assert result["aider"]["sessions"] == ["aider-20250102T030405"]
    assert result["codex"]["sessions"] == ["cx-1"]
    code, out, _ = run(ws, "import", "gemini-cli", "--discover", "--home", str(home))
    assert code == 0 and out == ""


def test_a_claude_file_of_odd_lines_only_neither_stops_the_import_nor_loses_a_session(
        ws: Path, tmp_path: Path) -> None:
    """Claude Code lines before the session's header are held; one the mapping cannot take
    (a ``subtype`` that is an object) raised out of the final replay: 'turnback import
    claude-code FOLDER' ended in a traceback and imported none of the folder's files, and
    with a header after it the session's record was dropped (every event then named no
    known session). Now that line is one problem, naming it, and the rest is imported."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    odd = json.dumps({"type": "system", "subtype": {}, "timestamp": "2026-01-02T03:04:04Z"})
    user = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s-good",
            "timestamp": "2026-01-02T03:04:05Z", "cwd": str(ws),
            "message": {"role": "user", "content": "hello"}}
    (folder / "a-odd-only.jsonl").write_text(odd + "\n")
    (folder / "b-odd-first.jsonl").write_text(
        odd + "\n" + json.dumps({**user, "sessionId": "s-late"}) + "\n")
    (folder / "c-good.jsonl").write_text(json.dumps(user) + "\n")
    code, out, err = run(ws, "import", "claude-code", str(folder))
    assert code == 0, err
    assert out.endswith("3 sessions from 3 files\n"), out
    assert "Traceback" not in err and "names no known session" not in err
    assert f"{folder / 'a-odd-only.jsonl'}:1: could not interpret this line" in err
    assert f"{folder / 'b-odd-first.jsonl'}:1: could not interpret this line" in err
    with Store.open(ws) as store:
        ids = {s.header.id for s in store.sessions()[0]}
    assert {"a-odd-only", "s-late", "s-good"} <= ids, ids
