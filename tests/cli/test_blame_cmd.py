"""``turnback blame``: the issue's JSON shape, the human lines, paths typed from a subfolder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.events import Kind
from wsutil import run_cli


def j(cwd: Path, *args: str) -> Any:
    return json.loads(run_cli(cwd, "--json", *args).stdout)


def _history(ws: Path) -> str:
    (ws / "src").mkdir()
    f = ws / "src" / "app.py"
    f.write_text("x = 1\n")
    with Store.open(ws) as store:
        store.checkpoint(label="start")
        sid = store.start_session(agent="claude-code", model="claude-x").id
        store.append(sid, Kind.PROMPT, {"text": "fix the login test\nplease"})
        store.checkpoint(session_id=sid)
        store.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
        f.write_text("x = 1\ny = 2\n")
        return store.checkpoint(session_id=sid).id


def test_blame_json_has_the_issues_shape(ws: Path) -> None:
    end = _history(ws)
    out = j(ws / "src", "blame", "app.py")  # typed from inside src/
    assert out["path"] == "src/app.py" and out["checkpoint"] is None
    first, second = out["lines"]
    assert (first["line"], first["origin"]["kind"]) == (1, "initial")
    o = second["origin"]
    assert (second["line"], o["kind"], o["agent"], o["checkpoint"]) == (2, "turn", "claude-code",
                                                                        end)
    assert o["turn"]["index"] == 1 and o["turn"]["prompt"] == "fix the login test"
    assert isinstance(o["sessionId"], str)
    at = j(ws, "blame", "src/app.py", "--at", end)
    assert at["checkpoint"] == end and [x["origin"]["kind"] for x in at["lines"]] == [
        "initial", "turn"]


def test_blame_human_lines_and_errors(ws: Path) -> None:
    _history(ws)
    out = run_cli(ws, "blame", "src/app.py").stdout.decode().splitlines()
    assert out[0].startswith("initial") and out[0].endswith("1) x = 1")
    assert out[1].startswith("claude-code") and "fix the login test" in out[1]
    assert out[1].endswith("2) y = 2")
    bad = run_cli(ws, "blame", "nope.py", check=False)
    assert bad.returncode != 0 and b"nope.py is not in the workspace" in bad.stderr
