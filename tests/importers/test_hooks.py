"""Agents' hook configuration: merged into the user's own, idempotent, removed exactly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from turnback.errors import InvalidInput, Unsafe
from turnback.importers import hooks

PROGRAM = ["/opt/tb/bin/turnback"]

USER_CLAUDE = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "date >> ~/prompts.log"},
        ]}],
    },
}


def write_json(path: Path, value: object, indent: int = 4) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, indent=indent) + "\n"
    path.write_text(text)
    return text


def test_claude_code_install_keeps_the_users_hooks_and_uninstall_restores_them(
    tmp_path: Path,
) -> None:
    f = tmp_path / ".claude" / "settings.local.json"
    before = write_json(f, USER_CLAUDE)
    assert hooks.install(tmp_path, "claude-code", PROGRAM) is True
    data = json.loads(f.read_text())
    assert data["permissions"] == USER_CLAUDE["permissions"]
    assert data["hooks"]["PreToolUse"] == USER_CLAUDE["hooks"]["PreToolUse"]
    stop, prompt = data["hooks"]["Stop"], data["hooks"]["UserPromptSubmit"]
    assert stop[0] == USER_CLAUDE["hooks"]["Stop"][0] and len(stop) == 2
    assert stop[1]["hooks"] == [{"type": "command", "timeout": 30,
                                 "command": "/opt/tb/bin/turnback hook claude-code Stop"}]
    assert prompt[1]["hooks"][0]["command"].endswith("hook claude-code UserPromptSubmit")
    assert f.read_text().startswith('{\n    "permissions"')  # the file's own indentation
    assert hooks.status(tmp_path, "claude-code").installed
    # idempotent: a second install (even from another install path) changes nothing
    text = f.read_text()
    assert hooks.install(tmp_path, "claude-code", ["turnback"]) is False
    assert f.read_text() == text
    assert hooks.uninstall(tmp_path, "claude-code") is True
    assert json.loads(f.read_text()) == USER_CLAUDE and f.read_text() == before
    assert hooks.uninstall(tmp_path, "claude-code") is False
    assert not hooks.status(tmp_path, "claude-code").installed


def test_a_user_hook_beside_ours_in_one_group_stays(tmp_path: Path) -> None:
    f = tmp_path / ".claude" / "settings.local.json"
    hooks.install(tmp_path, "claude-code", PROGRAM)
    data = json.loads(f.read_text())
    data["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "mine"})
    write_json(f, data, indent=2)
    assert hooks.uninstall(tmp_path, "claude-code") is True
    assert json.loads(f.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}


def test_installing_into_no_file_and_removing_leaves_nothing(tmp_path: Path) -> None:
    for agent in ("claude-code", "gemini-cli", "codex"):
        assert hooks.install(tmp_path, agent, PROGRAM) is True
        assert all(hooks.status(tmp_path, agent).events.values())
        assert hooks.uninstall(tmp_path, agent) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_gemini_cli_hooks(tmp_path: Path) -> None:
    f = tmp_path / ".gemini" / "settings.json"
    user = {"theme": "GitHub", "hooks": {"BeforeTool": [
        {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]}]}}
    write_json(f, user, indent=2)
    assert hooks.install(tmp_path, "gemini-cli", PROGRAM)
    data = json.loads(f.read_text())
    assert data["theme"] == "GitHub" and data["hooks"]["BeforeTool"] == user["hooks"]["BeforeTool"]
    entry = data["hooks"]["BeforeAgent"][0]["hooks"][0]
    assert entry["command"] == "/opt/tb/bin/turnback hook gemini-cli BeforeAgent"
    assert entry["timeout"] == 30_000  # Gemini CLI reads milliseconds
    assert "AfterAgent" in data["hooks"]
    assert hooks.uninstall(tmp_path, "gemini-cli")
    assert json.loads(f.read_text()) == user


def test_codex_hooks_go_beside_the_users_config_and_come_out_exactly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a strict reader apart from the writer's own (tomlkit): the standard library's, 3.11+
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in Python 3.11+ only; the "
                                  "3.11 run checks the file against it")

    f = tmp_path / ".codex" / "config.toml"
    f.parent.mkdir()
    user = ('# my codex\nmodel = "o4-mini"  # fast\nnotify = ["notify-send", "codex"]\n\n'
            '[sandbox_workspace_write]\nnetwork_access = true\n\n'
            '[[hooks.PreToolUse]]\nmatcher = "shell"\n'
            '[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "lint"\n')
    f.write_text(user)
    assert hooks.install(tmp_path, "codex", PROGRAM)
    text = f.read_text()
    assert text.startswith('# my codex\nmodel = "o4-mini"  # fast\n')  # comments kept
    doc = tomllib.loads(text)  # what Codex reads (codex-rs/config/src/hook_config.rs)
    assert doc["notify"] == ["notify-send", "codex"]  # the user's own notify stays
    assert doc["hooks"]["PreToolUse"] == [
        {"matcher": "shell", "hooks": [{"type": "command", "command": "lint"}]}]
    prompt = doc["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert prompt == {"type": "command", "timeout": 30,
                      "command": "/opt/tb/bin/turnback hook codex UserPromptSubmit"}
    assert doc["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook codex Stop")
    # Codex runs them once the user trusts them (/hooks): till then they do not count
    st = hooks.status(tmp_path, "codex")
    assert st.events == {"UserPromptSubmit": True, "Stop": True}
    assert not st.installed and "trust" in st.note
    assert "codex" not in hooks.hooked_agents(tmp_path)
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    key = f"{f}:user_prompt_submit:0:0"
    (codex_home / "config.toml").write_text(
        f'[hooks.state."{key}"]\ntrusted_hash = "sha256:1"\n'
        f'[hooks.state."{f}:stop:0:0"]\ntrusted_hash = "sha256:2"\n')
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    assert hooks.status(tmp_path, "codex").installed
    assert "codex" in hooks.hooked_agents(tmp_path)
    monkeypatch.delenv("CODEX_HOME")
    assert hooks.install(tmp_path, "codex", PROGRAM) is False  # idempotent
    assert hooks.uninstall(tmp_path, "codex")
    after = f.read_text()
    # exactly Turnback's entries are gone: the same settings, the comments kept (tomlkit
    # may spell the [hooks] table's header where the user left it implicit)
    assert tomllib.loads(after) == tomllib.loads(user)
    assert after.startswith('# my codex\nmodel = "o4-mini"  # fast\n') and "turnback" not in after
    assert hooks.uninstall(tmp_path, "codex") is False


def test_codex_notify_of_an_earlier_install_is_replaced_by_the_hooks(tmp_path: Path) -> None:
    f = tmp_path / ".codex" / "config.toml"
    f.parent.mkdir()
    f.write_text('model = "o4-mini"\n'
                 'notify = ["/opt/tb/bin/turnback", "hook", "codex", "notify"]\n')
    assert not hooks.status(tmp_path, "codex").installed
    assert hooks.install(tmp_path, "codex", PROGRAM)
    assert "notify" not in f.read_text() and "UserPromptSubmit" in f.read_text()
    assert hooks.uninstall(tmp_path, "codex")
    assert f.read_text().strip() == 'model = "o4-mini"'


def test_bad_or_linked_files_are_refused_untouched(tmp_path: Path) -> None:
    f = tmp_path / ".claude" / "settings.local.json"
    f.parent.mkdir()
    f.write_text('{"hooks": {"Stop": [}')  # broken
    with pytest.raises(InvalidInput, match="not valid JSON"):
        hooks.install(tmp_path, "claude-code", PROGRAM)
    assert f.read_text() == '{"hooks": {"Stop": [}'
    f.write_text("[1, 2]")
    with pytest.raises(InvalidInput, match="not an object"):
        hooks.install(tmp_path, "claude-code", PROGRAM)
    f.write_text('{"hooks": {"Stop": {"not": "a list"}}}')
    with pytest.raises(InvalidInput, match="not a list"):
        hooks.install(tmp_path, "claude-code", PROGRAM)
    f.unlink()
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    f.symlink_to(target)
    with pytest.raises(Unsafe, match="symbolic link"):
        hooks.install(tmp_path, "claude-code", PROGRAM)
    assert target.read_text() == "{}" and f.is_symlink()
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("model = [unclosed\n")
    with pytest.raises(InvalidInput, match="not valid TOML"):
        hooks.install(tmp_path, "codex", PROGRAM)
    assert hooks.hooked_agents(tmp_path) == set()  # broken files count as no hooks


def test_hook_input_of_each_agent() -> None:
    claude = json.dumps({"session_id": "abc-123", "transcript_path": "/h/.claude/x.jsonl",
                         "cwd": "/work/app", "hook_event_name": "UserPromptSubmit",
                         "permission_mode": "default", "prompt": "fix the tests"}).encode()
    call = hooks.parse_call("claude-code", "UserPromptSubmit", claude)
    assert (call.moment, call.session_id, call.workspace, call.prompt) == (
        hooks.PROMPT, "abc-123", Path("/work/app"), "fix the tests")
    stop = hooks.parse_call("claude-code", "Stop", json.dumps(
        {"session_id": "abc-123", "cwd": "/work/app", "hook_event_name": "Stop",
         "stop_hook_active": False}).encode())
    assert stop.moment == hooks.END
    gemini = hooks.parse_call("gemini-cli", "AfterAgent", json.dumps(
        {"session_id": "g1", "cwd": "/w", "hook_event_name": "AfterAgent",
         "timestamp": "2026-01-01T00:00:00Z", "prompt_response": "done"}).encode())
    assert (gemini.moment, gemini.session_id) == (hooks.END, "g1")
    submit = hooks.parse_call("codex", "UserPromptSubmit", json.dumps(
        {"session_id": "0199aaaa", "turn_id": "t1", "transcript_path": None, "cwd": "/w",
         "hook_event_name": "UserPromptSubmit", "model": "gpt-5", "permission_mode": "default",
         "prompt": "go"}).encode())
    assert (submit.moment, submit.session_id, submit.prompt) == (hooks.PROMPT, "0199aaaa", "go")
    codex = hooks.parse_call("codex", "notify", json.dumps(
        {"type": "agent-turn-complete", "thread-id": "0199aaaa", "turn-id": "t1",
         "cwd": "/w", "input-messages": ["go"], "last-assistant-message": "ok"}).encode())
    assert (codex.moment, codex.session_id) == (hooks.END, "0199aaaa")
    with pytest.raises(InvalidInput, match="not JSON"):
        hooks.parse_call("claude-code", "Stop", b"{nope")
    with pytest.raises(InvalidInput, match="not one Turnback handles"):
        hooks.parse_call("claude-code", "PreToolUse", b'{"hook_event_name": "PreToolUse"}')
    relative = hooks.parse_call("claude-code", "Stop", b'{"cwd": "../../etc"}',
                                cwd=lambda: Path("/here"))
    assert relative.workspace == Path("/here")  # only an absolute cwd is taken


@pytest.mark.skipif(os.name == "nt", reason="a POSIX executable is planted here")
def test_the_hook_program_is_never_a_turnback_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the server runs in the workspace: with '' in PATH, shutil.which answered a relative
    # 'turnback' when the workspace held one
    (tmp_path / "bin").mkdir()
    for folder in (tmp_path, tmp_path / "bin"):
        prog = folder / "turnback"
        prog.write_text("#!/bin/sh\n")
        prog.chmod(0o755)
    monkeypatch.delenv("TURNBACK_HOOK_PROGRAM", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep.join(["", str(tmp_path / "bin")]))
    assert hooks.hook_program() == [str(tmp_path / "bin" / "turnback")]
