"""turnback/pushHistory's ``forget`` (the editor's Forget Pushed Session), against a real
server and a bare repository over ``file://``: the session leaves the machine's ref on the
remote, the store keeps it, and another machine's session id is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import TurnbackClient


def names_on(remote: Path, ref: str) -> str:
    return subprocess.run(["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", ref],
                          check=True, capture_output=True, text=True).stdout


async def test_forgetting_a_pushed_session(client: TurnbackClient, ws: Path,
                                           tmp_path: Path) -> None:
    remote = tmp_path / "history.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    cp = (await client.call("turnback/createCheckpoint", {"label": "first"}))["checkpoint"]
    sid = cp["sessionId"]
    pushed = await client.call("turnback/pushHistory", {"remote": str(remote)})
    assert pushed["upToDate"] is False and pushed["replaces"] is False
    assert f"sessions/{sid}.jsonl" in names_on(remote, pushed["ref"])

    await client.fails("turnback/pushHistory", {"remote": str(remote), "forget": [sid],
                                                "dryRun": True}, -32602, "no dry run")
    res = await client.call("turnback/pushHistory", {"remote": str(remote), "forget": [sid]})
    assert res["forgotten"] == [sid] and res["replaces"] is True
    assert res["sessions"] == 0 and res["checkpoints"] == 0
    assert sid not in names_on(remote, res["ref"])
    listed = (await client.call("turnback/sessions", {}))["sessions"]
    assert sid in [s["id"] for s in listed], "the store keeps a forgotten session"

    await client.fails("turnback/pushHistory", {"remote": str(remote),
                                                "forget": [f"{sid}@laptop-0123abcd"]},
                       -32602, "not a session id of this machine")
