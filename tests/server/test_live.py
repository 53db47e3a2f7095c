"""Live behaviour: didChange from other processes, progress, cancellation, no stalls."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

from lsprotocol import types

from .conftest import TurnbackClient, run_cli, run_python

APPEND = """
import sys, time
from turnback import Store, Kind
s = Store.open(sys.argv[1])
if not s.has_session("agent"):
    s.start_session(title="agent run", agent="codex", session_id="agent")
s.append("agent", Kind.PROMPT, {"text": sys.argv[2]})
print(time.monotonic())
"""


async def _store_made(client: TurnbackClient) -> None:
    """A first checkpoint makes the store; its own notice is in before the test counts."""
    since = len(client.changes)
    await client.call("turnback/createCheckpoint", {})
    await client.wait_change(lambda p: p["checkpoints"], since=since)


async def test_did_change_when_another_process_appends(client: TurnbackClient, ws: Path) -> None:
    await _store_made(client)
    latencies = []
    for i in range(3):
        since = len(client.changes)
        done_at = float(run_python(APPEND, str(ws), f"turn {i}"))
        t, params = await client.wait_change(lambda p: "agent" in p["sessions"], since=since)
        assert params["folder"] == ws.as_uri()
        latencies.append(t - done_at)
    # Both clocks are CLOCK_MONOTONIC on one machine: the latency, printed, not asserted (a
    # figure belongs in bench/, and this machine may be loaded); wait_change's deadline fails
    # the test if a change is never reported
    print(f"didChange latency after another process's append: {latencies}")


async def test_did_change_when_the_cli_checkpoints(client: TurnbackClient, ws: Path) -> None:
    await _store_made(client)
    since = len(client.changes)
    run_cli(ws, "checkpoint", "-m", "from the cli")
    _, params = await client.wait_change(lambda p: p["checkpoints"], since=since)
    assert params["folder"] == ws.as_uri()
    cps = (await client.call("turnback/checkpoints", {}))["checkpoints"]
    assert cps[-1]["label"] == "from the cli"


async def test_did_change_for_the_servers_own_writes(client: TurnbackClient, ws: Path) -> None:
    since = len(client.changes)
    await client.call("turnback/createCheckpoint", {})
    # the checkpoint and its session event may reach the watcher in two batches (the store
    # is created by this very checkpoint): each must be reported, in one notice or two
    await client.wait_change(lambda p: p["checkpoints"], since=since)
    await client.wait_change(lambda p: p["sessions"] == ["workspace"], since=since)


async def test_bursts_are_coalesced(client: TurnbackClient, ws: Path) -> None:
    await _store_made(client)
    since = len(client.changes)
    run_python(
        "import sys\nfrom turnback import Store, Kind\ns = Store.open(sys.argv[1])\n"
        "for n in range(5):\n"
        "    s.start_session(title='burst', session_id=f'b{n}')\n"
        "    for i in range(40):\n"
        "        s.append(f'b{n}', Kind.NOTE, {'text': str(i)})\n",
        str(ws),
    )
    await client.wait_change(lambda p: "b4" in p["sessions"], since=since)
    # every notice of the burst is in once one for a later append is: notices keep the
    # order of the writes they report
    run_python(APPEND, str(ws), "after the burst")
    await client.wait_change(lambda p: "agent" in p["sessions"], since=since)
    end = next(i for i in range(since, len(client.changes))
               if "agent" in client.changes[i][1]["sessions"])
    got = client.changes[since:end]
    seen = set().union(*(set(p["sessions"]) for _, p in got))
    assert {"b0", "b1", "b2", "b3", "b4"} <= seen
    assert len(got) < 40, f"205 appends gave {len(got)} notifications"


def _big_workspace(ws: Path, files: int, size: int) -> None:
    block = os.urandom(size)
    for d in range(files // 100):
        sub = ws / "big" / f"d{d}"
        sub.mkdir(parents=True)
        for i in range(100):
            # distinct content per file, so every file is hashed and compressed
            (sub / f"f{i}.bin").write_bytes(block[: size - 8] + (d * 100 + i).to_bytes(8, "big"))


async def test_long_checkpoint_does_not_stall_reads(client: TurnbackClient, ws: Path) -> None:
    run_python(APPEND, str(ws), "hello")
    _big_workspace(ws, 3000, 20_000)
    task = asyncio.ensure_future(client.call("turnback/createCheckpoint", {"label": "big"}))
    latencies = []
    while not task.done():
        t0 = time.perf_counter()
        res = await client.call("turnback/sessions", {})
        latencies.append(time.perf_counter() - t0)
        assert res["total"] in (1, 2)  # the checkpoint adds the "workspace" session
        await client.call("turnback/session", {"sessionId": "agent"})
        await asyncio.sleep(0.01)
    cp = (await task)["checkpoint"]
    assert cp["files"] == 3003
    print(f"turnback/sessions during a {len(latencies)}-read checkpoint: median "
          f"{statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
    # reads were answered while the checkpoint ran (the figures are printed, not asserted:
    # timings belong in bench/)
    assert len(latencies) >= 5, "the checkpoint was too quick to overlap with reads"


async def test_first_checkpoint_reports_progress(client: TurnbackClient, ws: Path) -> None:
    _big_workspace(ws, 1000, 4_000)
    await client.call("turnback/createCheckpoint", {})
    kinds = [
        type(v).__name__ for values in client.progress_reports.values() for v in values
    ]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert "WorkDoneProgressReport" in kinds


async def test_cancelled_checkpoint_commits_nothing(client: TurnbackClient, ws: Path) -> None:
    _big_workspace(ws, 3000, 20_000)
    token = "cancel-me"
    client.progress_reports[token] = []  # a client-made token (workDoneToken)
    task = asyncio.ensure_future(
        client.call("turnback/createCheckpoint", {"workDoneToken": token})
    )
    deadline = time.monotonic() + 10
    while not any(type(v).__name__ == "WorkDoneProgressReport"
                  for v in client.progress_reports[token]):
        assert time.monotonic() < deadline and not task.done(), "no progress before the end"
        await asyncio.sleep(0.01)
    client.protocol.notify(
        types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
    )
    from pygls.exceptions import JsonRpcException

    try:
        await task
        raise AssertionError("the checkpoint finished despite the cancel")
    except JsonRpcException as exc:
        assert exc.code == -32800, exc
    assert (await client.call("turnback/checkpoints", {}))["checkpoints"] == []
    # ... and the next checkpoint works and sees everything.
    res = await client.call("turnback/createCheckpoint", {})
    assert res["checkpoint"]["files"] == 3003


async def test_listing_follows_other_processes(client: TurnbackClient, ws: Path) -> None:
    """The listing the server keeps between changes never misses one."""
    await client.call("turnback/createCheckpoint", {})
    assert (await client.call("turnback/sessions", {}))["total"] == 1
    for i in range(3):
        since = len(client.changes)
        run_python(APPEND, str(ws), f"turn {i}")
        await client.wait_change(lambda p: "agent" in p["sessions"], since=since)
        listed = await client.call("turnback/sessions", {})
        agent = next(s for s in listed["sessions"] if s["id"] == "agent")
        assert listed["total"] == 2 and agent["stats"]["prompts"] == i + 1
    # The server's own writes show at once.
    await client.call("turnback/createCheckpoint", {"sessionId": "agent"})
    listed = await client.call("turnback/sessions", {})
    agent = next(s for s in listed["sessions"] if s["id"] == "agent")
    assert agent["stats"]["checkpoints"] == 1


async def test_cancel_request_stops_a_checkpoint(client: TurnbackClient, ws: Path) -> None:
    """$/cancelRequest (not only the progress token) stops the work and commits nothing."""
    _big_workspace(ws, 3000, 20_000)
    msg_id = "cancel-by-id"
    fut = asyncio.ensure_future(
        client.protocol.send_request_async("turnback/createCheckpoint", {}, msg_id=msg_id)
    )
    deadline = time.monotonic() + 10
    while not any(type(v).__name__ == "WorkDoneProgressReport"
                  for values in client.progress_reports.values() for v in values):
        assert time.monotonic() < deadline and not fut.done(), "no progress before the end"
        await asyncio.sleep(0.01)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    from pygls.exceptions import JsonRpcException

    try:
        await fut
        raise AssertionError("the checkpoint finished despite the cancel")
    except JsonRpcException as exc:
        assert exc.code == -32800, exc
    assert (await client.call("turnback/checkpoints", {}))["checkpoints"] == []
    assert (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["files"] == 3003


async def test_log_says_why_a_checkpoint_walks(client: TurnbackClient, ws: Path) -> None:
    # The first checkpoint after start walks because the watcher has just started, not
    # because it was late; the second uses the watcher's paths and walks nothing.
    await client.call("turnback/createCheckpoint", {})
    (ws / "after.txt").write_text("x\n")
    await client.call("turnback/createCheckpoint", {})
    walks = [m.message for m in client.log_messages if "reading the whole workspace" in m.message]
    assert len(walks) == 1 and "did not confirm" not in walks[0], walks
