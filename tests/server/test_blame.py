"""turnback/blame: ranges of lines with their origin, kept and renewed as the store changes."""

from __future__ import annotations

from pathlib import Path

from .conftest import TurnbackClient, run_python
from .test_history import INVALID, NOT_FOUND, SEED

MORE = """
import sys
from pathlib import Path
from turnback import Store
ws = Path(sys.argv[1])
(ws / "README.md").write_text("changed\\nby a person\\n")
Store.open(ws).checkpoint(label="later")
"""


async def test_blame_follows_new_checkpoints(client: TurnbackClient, ws: Path) -> None:
    run_python(SEED, str(ws))
    res = await client.call("turnback/blame", {"path": "README.md"})
    assert res["path"] == "README.md" and res["checkpoint"] is None and res["lineCount"] == 1
    (only,) = res["ranges"]
    (o,) = res["origins"]
    assert (only["start"], only["end"], only["origin"]) == (1, 1, 0)
    assert (o["kind"], o["agent"], res["agentLines"]) == ("turn", "claude-code", 1)
    assert o["turn"]["prompt"] == "fix the bug" and o["sessionId"] == "s1"
    since = len(client.changes)
    run_python(MORE, str(ws))
    # a notice of the seed's own checkpoints may still come after ``since``: blame again
    # after each checkpoint notice until one is MORE's (wait_change fails past its deadline)
    while True:
        await client.wait_change(lambda p: p["checkpoints"], since=since)
        since = len(client.changes)
        res = await client.call("turnback/blame", {"path": "README.md"})
        kinds = [(r["start"], r["end"], res["origins"][r["origin"]]["kind"])
                 for r in res["ranges"]]
        if kinds != [(1, 1, "turn"), (2, 2, "uncommitted")]:
            break
    assert kinds == [(1, 1, "turn"), (2, 2, "person")]
    window = await client.call("turnback/blame", {"path": "README.md", "startLine": 2,
                                                  "endLine": 9})
    assert window["lineCount"] == 2 and window["agentLines"] == 1
    assert [r["start"] for r in window["ranges"]] == [2]
    assert [o["kind"] for o in window["origins"]] == ["person"]
    unsaved = await client.call("turnback/blame", {"path": "README.md",
                                                   "text": "typed\nchanged\nby a person\n"})
    assert [unsaved["origins"][r["origin"]]["kind"] for r in unsaved["ranges"]] == [
        "uncommitted", "turn", "person"]
    first = o["checkpoint"]
    at = await client.call("turnback/blame", {"path": "README.md", "checkpoint": first})
    assert at["checkpoint"] == first and at["lineCount"] == 1


async def test_blame_errors(client: TurnbackClient, ws: Path) -> None:
    run_python(SEED, str(ws))
    await client.fails("turnback/blame", {}, INVALID, "'path'")
    await client.fails("turnback/blame", {"path": "nope.txt"}, NOT_FOUND, "nope.txt")
    await client.fails("turnback/blame", {"path": "data.bin"}, INVALID, "binary")
    await client.fails("turnback/blame", {"path": "README.md", "checkpoint": "ffffffffffff"},
                       NOT_FOUND)
