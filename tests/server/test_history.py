"""turnback/turns, turnback/turnSteps, turnback/fileHistory, turnback/importCandidates."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .conftest import TurnbackClient, run_python, started

NOT_FOUND = -32001
INVALID = -32602

SEED = """
import sys
import asyncio
from pathlib import Path
from turnback import Store, Kind
ws = Path(sys.argv[1])
s = Store.open(ws)
s.start_session(title="fix", agent="claude-code", session_id="s1")
s.checkpoint(label="start", session_id="s1")
p = s.append("s1", Kind.PROMPT, {"text": "fix the bug\\nplease"})
s.append("s1", Kind.TOOL_CALL, {"name": "Bash", "input": {"command": "pytest"}, "toolUseId": "t1"})
s.append("s1", Kind.TOOL_RESULT, {"toolUseId": "t1", "isError": True, "output": "1 failed"})
s.append("s1", Kind.USAGE, {"input": 3, "output": 4})
(ws / "README.md").write_text("changed\\n")
s.checkpoint(label="end", session_id="s1")
print(p.id)
"""


async def test_turns_and_steps(client: TurnbackClient, ws: Path) -> None:
    prompt_id = run_python(SEED, str(ws)).strip()
    res = await client.call("turnback/turns", {"sessionId": "s1"})
    assert res["total"] == 2 and res["offset"] == 0
    prelude, turn = res["turns"]
    assert prelude["id"] == "prelude" and turn["id"] == prompt_id
    assert turn["prompt"] == "fix the bug"
    assert (turn["toolCalls"], turn["toolCallsFailed"]) == (1, 1)
    assert turn["before"] == prelude["after"] and turn["after"]
    assert turn["changes"] == {"files": 1, "linesAdded": 1, "linesRemoved": 1}
    latest = await client.call("turnback/turns", {"sessionId": "s1", "limit": 1})
    assert [t["id"] for t in latest["turns"]] == [prompt_id] and latest["offset"] == 1
    steps = (await client.call("turnback/turnSteps",
                               {"sessionId": "s1", "turnId": prompt_id}))["steps"]
    assert [s["kind"] for s in steps] == ["tool", "usage", "checkpoint"]
    assert steps[0]["label"] == "Bash(pytest)" and steps[0]["failed"] is True
    assert steps[0]["detail"] == "1 failed" and steps[1]["folded"] is True
    await client.fails("turnback/turnSteps", {"sessionId": "s1", "turnId": "nope"}, NOT_FOUND,
                       "no turn")
    await client.fails("turnback/turns", {"sessionId": "s2"}, NOT_FOUND, "no session")
    await client.fails("turnback/turns", {"sessionId": "s1", "limit": 0}, INVALID, "'limit'")


async def test_file_history(client: TurnbackClient, ws: Path) -> None:
    empty = await client.call("turnback/fileHistory", {"path": "README.md"})
    assert empty["versions"] == [] and empty["total"] == 0, "no store: no versions"
    run_python(SEED, str(ws))
    res = await client.call("turnback/fileHistory", {"path": "README.md"})
    assert res["total"] == 2
    newest, first = res["versions"]
    assert newest["status"] == "modified" and newest["turnPrompt"] == "fix the bug"
    assert newest["previous"] == first["checkpoint"]["id"] and first["previous"] is None
    assert newest["agent"] == "claude-code"
    await client.fails("turnback/fileHistory", {"path": "../x"}, -32004)
    await client.fails("turnback/fileHistory", {}, INVALID, "'path'")


async def test_import_candidates_counts_without_a_store(ws: Path) -> None:
    # following off: with it on, the follower imports aider's history (and makes the store)
    async with started(ws, options={"turnback": {"followAgents": False}}) as client:
        (ws / ".aider.chat.history.md").write_text(
            "# aider chat started at 2025-01-01 10:00:00\n")
        res = await client.call("turnback/importCandidates", {})
        assert {"source": "aider", "summary": res["sources"][0]["summary"], "files": 1} in \
            res["sources"]
        assert res["total"] >= 1
        assert not (ws / ".turnback").exists(), "looking must not create a store"


async def test_a_rewinds_step_names_the_checkpoint_it_took_first(client: TurnbackClient,
                                                                  ws: Path) -> None:
    """A rewind's step carries its safety checkpoint, so that the editor folds that
    checkpoint's step into the rewind's row (one user action, one row): the two steps said
    nothing of each other, and a turn showed `before rewind to “X”` above `Rewind to “X”`."""
    run_python(SEED, str(ws))
    cp = (await client.call("turnback/createCheckpoint", {"label": "good", "sessionId": "s1"})
          )["checkpoint"]["id"]
    (ws / "README.md").write_text("broken\n")
    safety = (await client.call("turnback/rewind", {"checkpoint": cp}))["safetyCheckpoint"]
    assert isinstance(safety, str)
    # a rewind answers once its files are in place; its event is written just after
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    steps: list[dict[str, object]] = []
    while not any(s["kind"] == "rewind" for s in steps) and loop.time() < deadline:
        await asyncio.sleep(0.05)
        turn = (await client.call("turnback/turns", {"sessionId": "s1"}))["turns"][-1]
        steps = (await client.call("turnback/turnSteps",
                                   {"sessionId": "s1", "turnId": turn["id"]}))["steps"]
    rewind = [s for s in steps if s["kind"] == "rewind"]
    assert len(rewind) == 1 and rewind[0].get("safetyCheckpoint") == safety, steps
    # the checkpoint's step is found by its event (the listing's eventId), as the editor does
    listed = (await client.call("turnback/checkpoints", {}))["checkpoints"]
    event = next(c["eventId"] for c in listed if c["id"] == safety)
    taken = [s for s in steps if s["id"] == event]
    assert len(taken) == 1 and taken[0]["kind"] == "checkpoint", steps
    assert all("safetyCheckpoint" not in s for s in steps if s["kind"] != "rewind")
