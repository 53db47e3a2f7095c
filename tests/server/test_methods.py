"""Every turnback/* method's success path, against a real server process."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .conftest import TurnbackClient, run_python


async def test_status_before_any_store(client: TurnbackClient, ws: Path) -> None:
    st = await client.call("turnback/status", {})
    assert st["exists"] is False
    assert st["folder"] == str(ws)
    assert st["store"] == str(ws / ".turnback")
    assert (st["sessions"], st["checkpoints"], st["bytes"]) == (0, 0, 0)
    assert st["watching"] is True
    assert not (ws / ".turnback").exists(), "looking must not create a store"
    listed = await client.call("turnback/sessions", {})
    assert listed["sessions"] == [] and listed["total"] == 0
    assert (await client.call("turnback/checkpoints", {}))["checkpoints"] == []


async def test_checkpoint_lists_and_status(client: TurnbackClient, ws: Path) -> None:
    res = await client.call("turnback/createCheckpoint", {"label": "first"})
    cp = res["checkpoint"]
    assert cp["label"] == "first" and cp["files"] == 3 and cp["partial"] is False
    assert res["incremental"] is False, "the first checkpoint walks the tree"
    for key in ("id", "label", "ts", "sessionId", "eventId", "auto", "partial"):
        assert key in cp
    cps = (await client.call("turnback/checkpoints", {}))["checkpoints"]
    assert [c["id"] for c in cps] == [cp["id"]]
    st = await client.call("turnback/status", {})
    assert st["exists"] is True and st["checkpoints"] == 1 and st["sessions"] == 1
    assert st["bytes"] > 0 and st["formatVersion"] >= 1
    sessions = await client.call("turnback/sessions", {})
    assert sessions["total"] == 1
    s = sessions["sessions"][0]
    assert s["id"] == cp["sessionId"]
    for key in ("id", "title", "agent", "startedAt", "endedAt", "stats"):
        assert key in s
    assert s["stats"]["checkpoints"] == 1


async def test_incremental_checkpoint_after_edit(client: TurnbackClient, ws: Path) -> None:
    first = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]
    (ws / "src" / "app.py").write_text("print('changed')\n")
    (ws / "new.txt").write_text("new\n")
    (ws / "README.md").unlink()
    res = await client.call("turnback/createCheckpoint", {"label": "after"})
    assert res["incremental"] is True and res["dirtyPaths"] >= 3
    second = res["checkpoint"]
    changes = (await client.call("turnback/changes", {"from": first["id"], "to": second["id"]}))
    by_path = {c["path"]: c for c in changes["changes"]}
    assert by_path["src/app.py"]["status"] == "modified"
    assert by_path["src/app.py"]["linesAdded"] == 1 and by_path["src/app.py"]["linesRemoved"] == 1
    assert by_path["new.txt"]["status"] == "added"
    assert by_path["README.md"]["status"] == "deleted"
    assert set(by_path) == {"src/app.py", "new.txt", "README.md"}


async def test_edit_just_before_checkpoint_is_in_it(client: TurnbackClient, ws: Path) -> None:
    """The watcher is flushed before a checkpoint trusts it: no change is ever missed."""
    await client.call("turnback/createCheckpoint", {})
    for i in range(15):
        (ws / "src" / "app.py").write_text(f"v{i}\n")
        (ws / f"dir{i}" / "deep").mkdir(parents=True)
        (ws / f"dir{i}" / "deep" / "f.txt").write_text(str(i))
        res = await client.call("turnback/createCheckpoint", {})
        assert res["incremental"] is True
        cp = res["checkpoint"]["id"]
        got = await client.call("turnback/fileContent", {"checkpoint": cp, "path": "src/app.py"})
        assert got["text"] == f"v{i}\n"
        got = await client.call(
            "turnback/fileContent", {"checkpoint": cp, "path": f"dir{i}/deep/f.txt"}
        )
        assert got["exists"] and got["text"] == str(i)


async def test_changes_against_working_tree(client: TurnbackClient, ws: Path) -> None:
    cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    (ws / "data.bin").write_bytes(b"\x00\x01\x02")
    res = await client.call("turnback/changes", {"from": cp})
    assert res["to"] is None
    assert res["changes"] == [
        {
            "path": "data.bin",
            "status": "modified",
            "binary": True,
            "linesAdded": 0,
            "linesRemoved": 0,
            "kind": "file",
            "modeChanged": False,
        }
    ]
    only = await client.call("turnback/changes", {"from": cp, "paths": ["src"]})
    assert only["changes"] == []


async def test_file_content(client: TurnbackClient, ws: Path) -> None:
    cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    text = await client.call("turnback/fileContent", {"checkpoint": cp, "path": "src/app.py"})
    assert text == {
        "path": "src/app.py",
        "exists": True,
        "binary": False,
        "size": 15,
        "kind": "file",
        "text": "print('hello')\n",
        "checkpoint": cp,
    }
    binary = await client.call("turnback/fileContent", {"checkpoint": cp, "path": "data.bin"})
    assert binary["binary"] is True and binary["size"] == 1024 and "text" not in binary
    gone = await client.call("turnback/fileContent", {"checkpoint": "latest", "path": "nope.txt"})
    assert gone["exists"] is False


async def test_rewind_then_undo(client: TurnbackClient, ws: Path) -> None:
    cp = (await client.call("turnback/createCheckpoint", {"label": "good"}))["checkpoint"]["id"]
    (ws / "src" / "app.py").write_text("broken\n")
    (ws / "junk.txt").write_text("junk\n")
    (ws / "README.md").unlink()

    dry = await client.call("turnback/rewind", {"checkpoint": cp, "dryRun": True})
    assert dry["dryRun"] is True and dry["safetyCheckpoint"] is None
    assert dry["written"] == ["README.md", "src/app.py"] and dry["removed"] == ["junk.txt"]
    assert (ws / "junk.txt").exists(), "a dry run changes nothing"

    res = await client.call("turnback/rewind", {"checkpoint": cp})
    assert res["dryRun"] is False and res["safetyCheckpoint"]
    assert sorted(res["written"]) == ["README.md", "src/app.py"]
    assert res["removed"] == ["junk.txt"]
    assert (ws / "src" / "app.py").read_text() == "print('hello')\n"
    assert not (ws / "junk.txt").exists() and (ws / "README.md").exists()

    undone = await client.call("turnback/undo", {})
    assert undone["dryRun"] is False
    assert (ws / "src" / "app.py").read_text() == "broken\n"
    assert (ws / "junk.txt").read_text() == "junk\n"
    assert not (ws / "README.md").exists()


async def test_an_undos_event_names_the_rewind_it_undid(client: TurnbackClient, ws: Path) -> None:
    """The session's rows of an undo and a redo said "undo (files)" alike."""
    run_python(SEED_SESSION, str(ws))
    cp = (await client.call("turnback/createCheckpoint", {"label": "good", "sessionId": "s1"})
          )["checkpoint"]["id"]
    (ws / "src" / "app.py").write_text("broken\n")
    await client.call("turnback/rewind", {"checkpoint": cp})
    await client.call("turnback/undo", {})
    await client.call("turnback/undo", {})
    # an undo answers once its files are in place; its event is written just after: waited for
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    said: list[str] = []
    while len(said) < 3 and loop.time() < deadline:
        await asyncio.sleep(0.05)
        res = await client.call("turnback/session", {"sessionId": "s1"})
        said = [e["summary"] for e in res["events"] if e["kind"] == "rewind"]
    assert said == [f"rewind to {cp} (files)", "undo of rewind to “good” (files)",
                    "redo of rewind to “good” (files)"]


async def test_rewind_chosen_paths(client: TurnbackClient, ws: Path) -> None:
    cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    (ws / "src" / "app.py").write_text("x\n")
    (ws / "README.md").write_text("y\n")
    res = await client.call("turnback/rewind", {"checkpoint": cp, "paths": ["README.md"]})
    assert res["written"] == ["README.md"]
    assert (ws / "README.md").read_text() == "# demo\n"
    assert (ws / "src" / "app.py").read_text() == "x\n"


SEED_SESSION = """
import sys
from turnback import Store, Kind
s = Store.open(sys.argv[1])
h = s.start_session(title="fix the bug", agent="claude-code", session_id="s1")
p = s.append("s1", Kind.PROMPT, {"text": "fix the bug"})
r = s.append("s1", Kind.RESPONSE, {"text": "done"})
s.append("s1", Kind.TOOL_CALL, {"name": "Bash", "input": {"command": "pytest"}, "toolUseId": "t1"})
print(p.id, r.id)
"""


async def test_session_and_fork(client: TurnbackClient, ws: Path) -> None:
    prompt_id, response_id = run_python(SEED_SESSION, str(ws)).split()
    res = await client.call("turnback/session", {"sessionId": "s1"})
    assert res["session"]["id"] == "s1" and res["session"]["title"] == "fix the bug"
    assert res["session"]["stats"]["prompts"] == 1 and res["session"]["stats"]["toolCalls"] == 1
    assert res["total"] == 3 and len(res["events"]) == 3
    first = res["events"][0]
    assert first["id"] == prompt_id and first["kind"] == "prompt" and first["parent"] is None
    assert first["summary"] == "fix the bug" and first["data"] == {"text": "fix the bug"}
    assert res["events"][2]["summary"] == "Bash(pytest)"
    page = await client.call("turnback/session", {"sessionId": "s1", "offset": 1, "limit": 1})
    assert [e["id"] for e in page["events"]] == [response_id] and page["total"] == 3

    forked = await client.call("turnback/fork", {"eventId": prompt_id})
    assert forked["sessionId"] == "s1" and forked["head"] == prompt_id
    after = await client.call("turnback/session", {"sessionId": "s1"})
    assert after["head"] == prompt_id


async def test_sessions_paging_and_query(client: TurnbackClient, ws: Path) -> None:
    run_python(
        "import sys\nfrom turnback import Store\ns = Store.open(sys.argv[1])\n"
        "for i in range(5):\n"
        "    s.start_session(title=f'task {i}', agent='codex', session_id=f'sess{i}')\n",
        str(ws),
    )
    page = await client.call("turnback/sessions", {"offset": 1, "limit": 2})
    assert page["total"] == 5 and len(page["sessions"]) == 2
    hit = await client.call("turnback/sessions", {"query": "task 3"})
    assert [s["id"] for s in hit["sessions"]] == ["sess3"] and hit["total"] == 1


async def test_checkpoint_in_a_session(client: TurnbackClient, ws: Path) -> None:
    run_python(SEED_SESSION, str(ws))
    res = await client.call("turnback/createCheckpoint", {"sessionId": "s1", "label": "mid"})
    assert res["checkpoint"]["sessionId"] == "s1"
    mine = await client.call("turnback/checkpoints", {"sessionId": "s1"})
    assert [c["id"] for c in mine["checkpoints"]] == [res["checkpoint"]["id"]]
    conv = await client.call(
        "turnback/rewind", {"checkpoint": res["checkpoint"]["id"], "mode": "conversation"}
    )
    assert conv["mode"] == "conversation" and conv["head"]


async def test_gc(client: TurnbackClient, ws: Path) -> None:
    first = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    (ws / "README.md").write_text("only in the second checkpoint\n" * 1000)
    await client.call("turnback/createCheckpoint", {})
    (ws / "README.md").write_text("# demo\n")
    dry = await client.call("turnback/gc", {"dryRun": True})
    assert dry["dryRun"] is True and dry["objectsRemoved"] == 0, "nothing is unreferenced"
    res = await client.call("turnback/gc", {"keepLast": 1})
    assert res["dryRun"] is False and res["checkpointsDropped"] == [first]
    assert res["objectsRemoved"] >= 1 and res["bytesFreed"] > 0


async def test_concurrent_requests(client: TurnbackClient, ws: Path) -> None:
    await client.call("turnback/createCheckpoint", {})
    calls = []
    for i in range(30):
        (ws / f"c{i}.txt").write_text(str(i))
        calls.append(client.call("turnback/sessions", {}))
        calls.append(client.call("turnback/status", {}))
        calls.append(client.call("turnback/createCheckpoint", {"label": f"c{i}"}))
        calls.append(client.call("turnback/checkpoints", {}))
    results = await asyncio.gather(*calls)
    labels = [r["checkpoint"]["label"] for r in results if "checkpoint" in r]
    assert labels == [f"c{i}" for i in range(30)]
    final = (await client.call("turnback/checkpoints", {}))["checkpoints"]
    assert len(final) == 31 and len({c["id"] for c in final}) == 31


async def test_checkpoints_after_rewind_and_undo_are_exact(
    client: TurnbackClient, ws: Path
) -> None:
    """Incremental checkpoints stay exact across rewinds, undos and edits between them."""
    a = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]
    (ws / "src" / "app.py").write_text("B\n")
    (ws / "b-only.txt").write_text("b\n")
    b = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]
    await client.call("turnback/rewind", {"checkpoint": a["id"]})
    (ws / "after-rewind.txt").write_text("r\n")
    c = await client.call("turnback/createCheckpoint", {})
    assert c["incremental"] is True
    diff = await client.call("turnback/changes", {"from": a["id"], "to": c["checkpoint"]["id"]})
    assert [(x["path"], x["status"]) for x in diff["changes"]] == [("after-rewind.txt", "added")]
    # Undo goes back to the rewind's safety checkpoint: state B (the later file goes too,
    # and stays in the undo's own safety checkpoint).
    undone = await client.call("turnback/undo", {})
    assert undone["removed"] == ["after-rewind.txt"]
    d = await client.call("turnback/createCheckpoint", {})
    assert d["incremental"] is True
    assert d["checkpoint"]["tree"] == b["tree"]


async def test_non_ascii_and_odd_json_round_trip(client: TurnbackClient, ws: Path) -> None:
    # answers are written as UTF-8 (Content-Length counts bytes); what orjson refuses
    # (a lone surrogate, an integer past 64 bits) is still written, the standard way
    run_python(
        "import sys\nfrom turnback import Store, Kind\ns = Store.open(sys.argv[1])\n"
        "s.start_session(title='réparer le café ☕ 修复', session_id='u1')\n"
        "s.append('u1', Kind.NOTE, {'text': 'naïve ✓', 'n': 2**70})\n",
        str(ws),
    )
    listed = await client.call("turnback/sessions", {})
    assert listed["sessions"][0]["title"] == "réparer le café ☕ 修复"
    res = await client.call("turnback/session", {"sessionId": "u1"})
    assert res["events"][0]["data"] == {"text": "naïve ✓", "n": 2**70}
    assert res["session"]["title"] == "réparer le café ☕ 修复"
