"""The methods about one session (``server/lookup.session_in``: turns, turnSteps, continue;
and session, checkpoints) refuse a ``sessionId`` or ``turnId`` that is not an id, before
any store is searched, naming the param; a session file replaced by a link is refused
naming it; the server answers on (redteam50: the same answers as before ux36 made
``session_in`` one piece, run against both)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .conftest import TurnbackClient, run_cli

INVALID, DAMAGED = -32602, -32003
BAD_IDS: list[Any] = ["../x", "a/b", "..", ".", "", "x" * 300, "x" * 1_000_000, 5, [], {"a": 1},
                      "\u202e", "a\x00b", "\ud800"]
ABOUT_A_SESSION = ["turnback/turns", "turnback/turnSteps", "turnback/continue",
                   "turnback/session", "turnback/checkpoints"]


def _import_a_session(ws: Path) -> Path:
    src = ws.parent / "t.jsonl"
    src.write_text(json.dumps(
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "sess1",
         "timestamp": "2026-01-02T03:04:05Z", "cwd": str(ws),
         "message": {"role": "user", "content": "hello"}}) + "\n")
    run_cli(ws, "import", "claude-code", str(src))
    return ws / ".turnback" / "sessions" / "sess1.jsonl"


async def test_ids_that_are_not_ids_are_refused_naming_the_param(
        client: TurnbackClient, ws: Path) -> None:
    _import_a_session(ws)
    for method in ABOUT_A_SESSION:
        for bad in BAD_IDS:
            await client.fails(method, {"sessionId": bad, "turnId": "u1"}, INVALID,
                               f"{method}: param 'sessionId'")
    for method in ("turnback/turnSteps", "turnback/continue"):
        for bad in BAD_IDS:
            await client.fails(method, {"sessionId": "sess1", "turnId": bad}, INVALID,
                               f"{method}: param 'turnId'")
    steps = await client.call("turnback/turnSteps", {"sessionId": "sess1", "turnId": "u1"})
    assert steps == {"steps": [], "folder": ws.as_uri()}  # a prompt without tool steps


async def test_a_session_file_replaced_by_a_link_is_refused_and_the_server_answers_on(
        client: TurnbackClient, ws: Path) -> None:
    session = _import_a_session(ws)
    outside = ws.parent / "outside.jsonl"
    shutil.copy(session, outside)
    session.unlink()
    session.symlink_to(outside)
    for method in ("turnback/turns", "turnback/turnSteps", "turnback/session"):
        await client.fails(method, {"sessionId": "sess1", "turnId": "u1"}, DAMAGED,
                           f"{session} is a symbolic link, not a regular file")
    assert (await client.call("turnback/status", {}))["exists"] is True
