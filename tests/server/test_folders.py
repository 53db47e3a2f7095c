"""Multi-root workspaces, settings, the ways to start the server, and import."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcServerError

from shared_data import need_transcripts
from turnback.errors import InvalidInput
from turnback.server.workspace.folders import file_uri_path

from .conftest import TurnbackClient, make_workspace, started


async def test_two_folders_two_stores(tmp_path: Path) -> None:
    a, b = make_workspace(tmp_path / "a"), make_workspace(tmp_path / "b")
    async with started(a, b) as client:
        await client.fails("turnback/status", {}, -32602, "'folder'", a.as_uri(), b.as_uri())
        cp_a = await client.call("turnback/createCheckpoint", {"folder": a.as_uri(), "label": "A"})
        cp_b = await client.call("turnback/createCheckpoint", {"folder": str(b), "label": "B"})
        assert cp_a["folder"] == a.as_uri() and cp_b["folder"] == b.as_uri()
        for folder, label in ((a, "A"), (b, "B")):
            st = await client.call("turnback/status", {"folder": folder.as_uri()})
            assert st["store"] == str(folder / ".turnback") and st["checkpoints"] == 1
            cps = await client.call("turnback/checkpoints", {"folder": folder.as_uri()})
            assert [c["label"] for c in cps["checkpoints"]] == [label]
        # Ids find their folder without a 'folder' param.
        got = await client.call(
            "turnback/fileContent",
            {"checkpoint": cp_b["checkpoint"]["id"], "path": "README.md"},
        )
        assert got["text"] == "# demo\n"
        (b / "README.md").write_text("changed in b\n")
        res = await client.call("turnback/rewind", {"checkpoint": cp_b["checkpoint"]["id"]})
        assert res["folder"] == b.as_uri() and res["written"] == ["README.md"]
        assert (b / "README.md").read_text() == "# demo\n"


async def test_folders_added_and_removed(tmp_path: Path) -> None:
    a, b = make_workspace(tmp_path / "a"), make_workspace(tmp_path / "b")
    async with started(a) as client:
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=b.as_uri(), name="b")],
                    removed=[types.WorkspaceFolder(uri=a.as_uri(), name="a")],
                )
            )
        )
        deadline = time.monotonic() + 10
        while True:
            try:  # between the removal and the addition the server may have no folder
                if (await client.call("turnback/status", {}))["folder"] == str(b):
                    break
            except JsonRpcServerError:
                pass
            assert time.monotonic() < deadline, "the added folder never became the default"
            await asyncio.sleep(0.02)
        await client.fails("turnback/status", {"folder": a.as_uri()}, -32001, "'folder'")


async def test_folder_naming_an_unknown_home_is_not_found(tmp_path: Path) -> None:
    # "~user" of a user that does not exist cannot be expanded; it is just a wrong folder.
    ws = make_workspace(tmp_path / "ws")
    async with started(ws) as client:
        for folder in ("~no-such-user-here/x", "~\xf7r\xcc\x14"):
            await client.fails("turnback/sessions", {"folder": folder}, -32001, "'folder'")
        assert (await client.call("turnback/status", {}))["folder"] == str(ws)


async def test_store_path_from_initialization_options(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    elsewhere = tmp_path / "stores" / "ws"
    async with started(ws, options={"turnback": {"storePath": str(elsewhere)}}) as client:
        await client.call("turnback/createCheckpoint", {})
        st = await client.call("turnback/status", {})
        assert st["store"] == str(elsewhere) and (elsewhere / "config.json").exists()
        assert not (ws / ".turnback").exists()
        await client.wait_watching()
        # A store outside the workspace is watched too.
        since = len(client.changes)
        await client.call("turnback/createCheckpoint", {"label": "again"})
        await client.wait_change(lambda p: p["checkpoints"], since=since)


async def test_settings_change_moves_the_store(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    async with started(ws) as client:
        await client.call("turnback/createCheckpoint", {})
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"turnback": {"storePath": "../other-store", "ignores": ["*.bin"]}}
            )
        )
        st = await client.call("turnback/status", {})
        assert st["store"] == str(tmp_path / "other-store") and st["exists"] is False
        cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
        for path, kept in (("data.bin", False), ("README.md", True), ("src/app.py", True)):
            got = await client.call("turnback/fileContent", {"checkpoint": cp, "path": path})
            assert got["exists"] is kept, f"{path}: the new settings ignore *.bin"


async def test_bad_settings_are_reported_and_ignored(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    async with started(ws, options={"turnback": {"sizeCapBytes": "big"}}) as client:
        st = await client.call("turnback/status", {})
        assert st["store"] == str(ws / ".turnback")
        assert any("turnback.sizeCapBytes" in m.message for m in client.log_messages)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"turnback": {"retention": []}})
        )
        await client.call("turnback/status", {})
        assert any("turnback.retention" in m.message for m in client.log_messages)


async def test_settings_pulled_per_folder(tmp_path: Path) -> None:
    a, b = make_workspace(tmp_path / "a"), make_workspace(tmp_path / "b")

    def configure(client: TurnbackClient) -> None:
        client.set_configuration(
            {"storePath": ".history"}, section="turnback", scope_uri=b.as_uri()
        )

    async with started(a, b, before_init=configure) as client:
        st_a = await client.call("turnback/status", {"folder": a.as_uri()})
        st_b = await client.call("turnback/status", {"folder": b.as_uri()})
        assert st_a["store"] == str(a / ".turnback")
        assert st_b["store"] == str(b / ".history")


async def test_turnback_serve_command(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    command = [sys.executable, "-m", "turnback.cli.main", "serve"]
    async with started(ws, command=command) as client:
        assert (await client.call("turnback/status", {}))["folder"] == str(ws)


async def test_import_a_real_transcript(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    source = need_transcripts() / "claude-code" / "d-kimuson+claude-code-viewer"
    async with started(ws) as client:
        res = await client.call("turnback/import", {"source": "claude-code", "path": str(source)})
        assert len(res["sessions"]) == 2 and res["events"] > 0
        listed = await client.call("turnback/sessions", {})
        assert {s["id"] for s in listed["sessions"]} >= set(res["sessions"])
        again = await client.call("turnback/import", {"source": "claude-code", "path": str(source)})
        assert again["events"] == 0, "importing twice adds nothing"
        await client.fails(
            "turnback/import", {"source": "codex", "path": "no/such/file.jsonl"}, -32001, "'path'"
        )


def _claude_line(ws: Path, sid: str, uuid: str, parent: str | None, role: str, text: str) -> str:
    msg: dict[str, object] = {"role": role, "content": text}
    if role == "assistant":
        msg = {"id": f"msg_{uuid}", "type": "message", "role": "assistant", "model": "claude-opus",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": 10, "output_tokens": 5}}
    return json.dumps({
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(ws),
        "sessionId": sid, "version": "1.0.108", "type": role, "message": msg, "uuid": uuid,
        "timestamp": "2026-11-22T10:00:00.000Z",
    }) + "\n"


async def test_follow_agents_checkpoints_each_new_turn(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    claude = tmp_path / "claude"
    project = claude / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(ws))
    project.mkdir(parents=True)
    sid = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    transcript = project / f"{sid}.jsonl"
    transcript.write_text(
        _claude_line(ws, sid, "u1", None, "user", "make it faster")
        + _claude_line(ws, sid, "a1", "u1", "assistant", "done")
    )
    options = {"turnback": {"followAgents": True, "autoCheckpoint": True}}
    async with started(ws, options=options, CLAUDE_CONFIG_DIR=str(claude)) as client:
        await client.wait_change(lambda p: sid in p["sessions"], timeout=10)
        session = await client.call("turnback/session", {"sessionId": sid})
        assert session["session"]["stats"]["prompts"] == 1
        assert (await client.call("turnback/checkpoints", {"sessionId": sid}))["checkpoints"] == []

        (ws / "src" / "app.py").write_text("print('edited by the agent')\n")
        with transcript.open("a") as f:  # the user types the next prompt
            f.write(_claude_line(ws, sid, "u2", "a1", "user", "now add tests"))
        deadline = asyncio.get_running_loop().time() + 10
        while not (cps := (await client.call("turnback/checkpoints", {"sessionId": sid}))[
            "checkpoints"
        ]):
            assert asyncio.get_running_loop().time() < deadline, "no checkpoint at the new turn"
            await asyncio.sleep(0.1)
        assert cps[0]["auto"] is True
        got = await client.call(
            "turnback/fileContent", {"checkpoint": cps[0]["id"], "path": "src/app.py"}
        )
        assert got["text"] == "print('edited by the agent')\n"
        session = await client.call("turnback/session", {"sessionId": sid})
        assert session["session"]["stats"]["prompts"] == 2


async def test_folder_reached_through_a_symlink(tmp_path: Path) -> None:
    real = make_workspace(tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    async with started(link) as client:
        await client.wait_watching()
        await client.call("turnback/createCheckpoint", {})
        (real / "README.md").write_text("edited\n")
        since = len(client.changes)
        res = await client.call("turnback/createCheckpoint", {})
        assert res["incremental"] is True and res["dirtyPaths"] == 1
        await client.wait_change(lambda p: p["checkpoints"], since=since)
        assert (await client.call("turnback/status", {"folder": link.as_uri()}))["checkpoints"] == 2


@pytest.mark.parametrize(("uri", "windows", "path"), [
    ("file:///c%3A/Users/me/my%20proj", True, "c:\\Users\\me\\my proj"),
    ("file:///C:/work", True, "C:\\work"),
    ("file://fileserver/share/proj", True, "\\\\fileserver\\share\\proj"),
    ("file://localhost/c%3A/w", True, "c:\\w"),
    ("file:///home/me/a%5Cb", False, "/home/me/a\\b"),  # a backslash inside a Linux name
    ("file://localhost/home/me", False, "/home/me"),
])
def test_file_uris_as_each_platform_spells_the_path(uri: str, windows: bool, path: str) -> None:
    assert file_uri_path(uri, windows=windows) == path


def test_a_unc_uri_is_refused_off_windows() -> None:
    with pytest.raises(InvalidInput, match="only local"):
        file_uri_path("file://fileserver/share/proj", windows=False)
