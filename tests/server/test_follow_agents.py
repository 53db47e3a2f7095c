"""Following agents through the server: on by default, event-driven, per agent, never untrusted."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from turnback.importers.agents.claude_code import encode_project_dir

from .conftest import TurnbackClient, make_workspace, started

SID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"


def line(ws: Path, uuid: str, parent: str | None, kind: str, **extra: Any) -> str:
    obj: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "cwd": str(ws),
                           "sessionId": SID, "type": kind, "uuid": uuid,
                           "timestamp": "2026-11-22T10:00:00.000Z", **extra}
    return json.dumps(obj) + "\n"


def prompt(ws: Path, uuid: str, parent: str | None, text: str) -> str:
    return line(ws, uuid, parent, "user", message={"role": "user", "content": text})


def turn_end(ws: Path, uuid: str, parent: str) -> str:
    return line(ws, uuid, parent, "system", subtype="turn_duration", content="", durationMs=900)


def project(home: Path, ws: Path) -> Path:
    return home / ".claude" / "projects" / encode_project_dir(str(ws.resolve()))


async def until(check: Callable[[], Awaitable[Any]], what: str, timeout: float = 15.0) -> Any:
    """Ask until ``check`` answers something true (a condition, not a fixed wait)."""
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def checkpoints(client: TurnbackClient) -> list[dict[str, Any]]:
    try:
        got: list[dict[str, Any]] = (await client.call(
            "turnback/checkpoints", {"sessionId": SID}))["checkpoints"]
    except Exception:
        return []  # no store or no session yet
    return got


async def prompts(client: TurnbackClient) -> int:
    try:
        return int((await client.call("turnback/session", {"sessionId": SID}))
                   ["session"]["stats"]["prompts"])
    except Exception:
        return 0


async def test_on_by_default_imports_then_checkpoints_each_turn(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    f = project(home, ws) / f"{SID}.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text(prompt(ws, "u1", None, "an old prompt") + turn_end(ws, "d1", "u1"))
    async with started(ws, HOME=str(home)) as client:  # no settings at all
        await until(lambda: prompts(client), "the existing session imported")
        status = await client.call("turnback/status", {})
        following = status["following"]
        assert following["state"] in ("importing", "following")
        assert "claude-code" in [a["agent"] for a in following["agents"]]
        assert "Claude Code" in following["summary"]
        assert await checkpoints(client) == []  # history makes no checkpoint

        (ws / "src" / "app.py").write_text("print('the user edited this')\n")
        with f.open("a") as fh:
            fh.write(prompt(ws, "u2", "d1", "make it faster"))
        cps = await until(lambda: checkpoints(client), "a checkpoint at the new prompt")
        assert cps[0]["label"] == "new turn" and cps[0]["auto"] is True
        got = await client.call("turnback/fileContent",
                                {"checkpoint": cps[0]["id"], "path": "src/app.py"})
        assert got["text"] == "print('the user edited this')\n"

        (ws / "src" / "app.py").write_text("print('the agent made it faster')\n")
        with f.open("a") as fh:
            fh.write(turn_end(ws, "d2", "u2"))

        async def two() -> list[dict[str, Any]]:
            cps = await checkpoints(client)
            return cps if len(cps) == 2 else []

        cps = await until(two, "a checkpoint at the turn's end")
        assert cps[1]["label"] == "end of turn"
        status = await client.call("turnback/status", {})
        claude = next(a for a in status["following"]["agents"] if a["agent"] == "claude-code")
        assert status["following"]["state"] == "following" and claude["files"] == 1


async def test_a_project_folder_made_after_the_server_started(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    home.mkdir()
    async with started(ws, HOME=str(home)) as client:
        await client.wait_watching()
        status = await client.call("turnback/status", {})
        assert status["exists"] is False  # no agent session here: no store made
        await until(lambda: _following(client), "following started")
        f = project(home, ws) / f"{SID}.jsonl"
        f.parent.mkdir(parents=True)  # Claude Code's first session in this folder
        f.write_text(prompt(ws, "u1", None, "first prompt ever"))
        cps = await until(lambda: checkpoints(client), "the new session's first turn")
        assert cps[0]["label"] == "new turn"
        assert await prompts(client) == 1


async def _following(client: TurnbackClient) -> bool:
    return bool((await client.call("turnback/status", {}))["following"]["state"] == "following")


async def test_an_untrusted_workspace_reads_nothing(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    f = project(home, ws) / f"{SID}.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text(prompt(ws, "u1", None, "private"))
    # what the extension sends for a workspace VS Code does not trust
    options = {"turnback": {"readOnly": True, "followAgents": True}}
    async with started(ws, options=options, HOME=str(home)) as client:
        await client.wait_watching()
        status = await client.call("turnback/status", {})
        assert status["following"]["state"] == "off"
        assert "not trusted" in status["following"]["summary"]
        assert status["exists"] is False and not (ws / ".turnback").exists()


async def test_followagents_per_agent_and_the_old_boolean(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    home.mkdir()
    options = {"turnback": {"followAgents": {"claude-code": False}}}
    async with started(ws, options=options, HOME=str(home)) as client:
        await client.wait_watching()
        agents = [a["agent"] for a in (await client.call("turnback/status", {}))
                  ["following"]["agents"]]
        assert "claude-code" not in agents and "codex" in agents
    async with started(ws, options={"turnback": {"followAgents": False}},
                       HOME=str(home)) as client:
        await client.wait_watching()
        following = (await client.call("turnback/status", {}))["following"]
        assert following["state"] == "off" and "followAgents is off" in following["summary"]


async def test_with_the_agents_hooks_installed_the_follower_only_imports(tmp_path: Path) -> None:
    from turnback.importers import hooks

    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    hooks.install(ws, "claude-code", ["turnback"])
    f = project(home, ws) / f"{SID}.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text(prompt(ws, "u1", None, "old"))
    async with started(ws, HOME=str(home)) as client:
        await until(lambda: prompts(client), "the existing session imported")
        with f.open("a") as fh:
            fh.write(prompt(ws, "u2", "u1", "new"))

        async def two() -> bool:
            return await prompts(client) == 2

        await until(two, "the new prompt imported")
        # the checkpoint would have been made in the same write as the import
        assert await checkpoints(client) == []


async def test_the_first_import_can_be_cancelled(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    f = project(home, ws) / f"{SID}.jsonl"
    f.parent.mkdir(parents=True)
    with f.open("w") as fh:  # a long history: its import takes a while
        parent = None
        for i in range(150_000):
            fh.write(prompt(ws, f"u{i}", parent, f"prompt number {i} " + "x" * 200))
            parent = f"u{i}"
    title = "Turnback: importing agents' sessions"
    async with started(ws, HOME=str(home)) as client:

        async def begun() -> str | None:
            for token, values in client.progress_reports.items():
                if values and getattr(values[0], "title", None) == title:
                    return str(token)
            return None

        token = await until(begun, "the import's progress")
        from lsprotocol import types

        client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                               types.WorkDoneProgressCancelParams(token=token))

        async def stopped() -> str | None:
            state = (await client.call("turnback/status", {}))["following"]["state"]
            return str(state) if state in ("cancelled", "following") else None

        state = await until(stopped, "the import to stop", timeout=60)
        assert state == "cancelled", "the import finished before the cancel reached it"
        following = (await client.call("turnback/status", {}))["following"]
        assert "cancelled" in following["summary"]
        kinds = [type(v).__name__ for v in client.progress_reports[token]]
        assert kinds[-1] == "WorkDoneProgressEnd"


def test_every_agent_source_has_a_name_for_the_status_bar() -> None:
    from turnback.importers.registry import SOURCES
    from turnback.server.jobs.follow import LABELS

    assert {s.name for s in SOURCES.values() if s.agent} <= LABELS.keys()


async def session_prompts(client: TurnbackClient, sid: str) -> int:
    try:
        return int((await client.call("turnback/session", {"sessionId": sid}))
                   ["session"]["stats"]["prompts"])
    except Exception:
        return 0


async def test_roots_known_only_once_written_are_followed_without_a_restart(
        tmp_path: Path) -> None:
    """Copilot Chat's storage folder for this workspace, and a Gemini CLI project named
    in ``projects.json``, both made after the server started: their sessions come in."""
    ws = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    (home / ".config" / "Code" / "User" / "workspaceStorage").mkdir(parents=True)
    async with started(ws, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config")) as client:
        await client.wait_watching()
        await until(lambda: _following(client), "following started")
        # VS Code makes the workspace's storage folder, then names it in workspace.json
        storage = home / ".config" / "Code" / "User" / "workspaceStorage" / "h9"
        storage.mkdir()
        (storage / "workspace.json").write_text(json.dumps({"folder": ws.resolve().as_uri()}))
        (storage / "chatSessions").mkdir()
        (storage / "chatSessions" / "s-9.json").write_text(json.dumps({
            "version": 3, "sessionId": "s-9", "creationDate": 1767225600000,
            "requests": [{"requestId": "r1", "timestamp": 1767225601000,
                          "message": {"text": "first chat"}, "response": []}]}))
        await until(lambda: session_prompts(client, "s-9"), "the Copilot Chat session")
        # Gemini CLI names the project in ~/.gemini/projects.json, then writes its chats
        # under the slug (a folder of ~/.gemini that did not exist at the start)
        gemini = home / ".gemini"
        gemini.mkdir()
        (gemini / "projects.json").write_text(
            json.dumps({"projects": {str(ws.resolve()): "myproj"}}))
        chats = gemini / "tmp" / "myproj" / "chats"
        chats.mkdir(parents=True)
        (chats / "session-g.jsonl").write_text(
            json.dumps({"sessionId": "g-9", "projectHash": "h", "kind": "main",
                        "startTime": "2026-01-01T00:00:00.000Z"}) + "\n"
            + json.dumps({"id": "u1", "timestamp": "2026-01-01T00:00:01.000Z",
                          "type": "user", "content": "first gemini prompt"}) + "\n")
        await until(lambda: session_prompts(client, "g-9"), "the Gemini CLI session")
