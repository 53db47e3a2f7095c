"""A long turnback/import: reads are answered while it runs, and $/cancelRequest stops it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import TurnbackClient

LINES = 150_000  # ~55 MB: a few seconds of import, far longer than a cancel takes


def big_rollout(path: Path, ws: Path, lines: int = LINES) -> None:
    """A Codex rollout of this workspace with ``lines`` distinct answers."""
    with path.open("w") as f:
        meta = {"id": "big-1", "cwd": str(ws), "timestamp": "2026-01-01T00:00:00.000Z"}
        f.write(json.dumps({"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
                            "payload": meta}) + "\n")
        for i in range(lines):
            item = {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": f"answer {i} " + "x" * 300}]}
            f.write(json.dumps({"timestamp": "2026-01-01T00:00:01.000Z",
                                "type": "response_item", "payload": item}) + "\n")


async def _until_progress(client: TurnbackClient, fut: asyncio.Future[object]) -> None:
    deadline = time.monotonic() + 30
    while not any(type(v).__name__ == "WorkDoneProgressReport"
                  for values in client.progress_reports.values() for v in values):
        assert time.monotonic() < deadline and not fut.done(), "no import progress"
        await asyncio.sleep(0.01)


async def test_import_is_cancelled_and_reads_are_answered_meanwhile(
    client: TurnbackClient, ws: Path, tmp_path: Path
) -> None:
    rollout = tmp_path / "rollout-big.jsonl"
    big_rollout(rollout, ws)
    msg_id = "import-to-cancel"
    fut = asyncio.ensure_future(client.protocol.send_request_async(
        "turnback/import", {"source": "codex", "path": str(rollout)}, msg_id=msg_id))
    await _until_progress(client, fut)

    # Reads are answered while the import runs (it is on a worker thread, not the loop).
    answered = 0
    for _ in range(3):
        listed = await client.call("turnback/sessions", {}, timeout=5)
        assert isinstance(listed["sessions"], list)
        await client.call("turnback/status", {}, timeout=5)
        answered += 1
    assert not fut.done(), "the import ended before the reads: make the rollout bigger"

    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(fut, 20)
        raise AssertionError("the import finished despite $/cancelRequest")
    except JsonRpcException as exc:
        assert exc.code == -32800, exc  # LSP RequestCancelled
    took = time.monotonic() - t0
    print(f"import cancelled {took * 1000:.0f} ms after $/cancelRequest; "
          f"{answered * 2} reads answered while it ran")

    # What was written before the cancel is consistent: the next import completes it.
    out = await client.call("turnback/import", {"source": "codex", "path": str(rollout)},
                            timeout=120)
    assert out["sessions"] == ["big-1"] and out["problems"] == []
    session = await client.call("turnback/session", {"sessionId": "big-1", "limit": 1})
    assert session["total"] == LINES + 1  # every line once: nothing lost, nothing twice


def big_snapshot(path: Path, messages: int) -> None:
    """A seed-004 snapshot: one JSON document, no progress until it is read whole."""
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "y" * 100}
            for i in range(messages)]
    path.write_text(json.dumps({"version": 1, "messages": msgs, "pinned": [False] * messages}))


async def test_cancel_stops_a_document_import_between_records(
    client: TurnbackClient, ws: Path, tmp_path: Path
) -> None:
    """A whole-document import reports no progress before its end: the cancel is checked
    between its records, so it stops long before it has written them all."""
    messages = 300_000
    snap = tmp_path / "snap.json"
    big_snapshot(snap, messages)
    msg_id = "snapshot-to-cancel"
    fut = asyncio.ensure_future(client.protocol.send_request_async(
        "turnback/import", {"source": "snapshot-json", "path": str(snap)}, msg_id=msg_id))
    deadline = time.monotonic() + 60
    while not (await client.call("turnback/sessions", {}, timeout=5))["sessions"]:
        assert time.monotonic() < deadline and not fut.done(), "no session before the end"
        await asyncio.sleep(0.01)  # the first batch of events is written: it runs
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    try:
        await asyncio.wait_for(fut, 60)
        raise AssertionError("the import finished despite $/cancelRequest")
    except JsonRpcException as exc:
        assert exc.code == -32800, exc
    (listed,) = (await client.call("turnback/sessions", {}))["sessions"]
    page = await client.call("turnback/session", {"sessionId": listed["id"], "limit": 1})
    # Stopped between records: far from all of them written (each batch is 5000).
    assert page["total"] < messages // 2, page["total"]
    out = await client.call("turnback/import", {"source": "snapshot-json", "path": str(snap)},
                            timeout=120)
    assert out["problems"] == []
    page = await client.call("turnback/session", {"sessionId": listed["id"], "limit": 1})
    assert page["total"] == messages
