"""``shutdown`` while a checkpoint is under way: the store's close waits for the checkpoint
(its mutex), off the event loop, so the server answers meanwhile and the record is whole.

The server is started through a small program that holds every checkpoint just before its
commit until the test creates a file: the checkpoint is under way for as long as the test
needs, with no timing luck.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from .conftest import started

HOLD = """
import sys, time
from pathlib import Path
from turnback.store.checkpoint_ops import CheckpointOps

started, release = Path(sys.argv[1]), Path(sys.argv[2])
commit = CheckpointOps._commit_checkpoint

def held(self, *args, **kwargs):
    started.touch()
    deadline = time.monotonic() + 60
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return commit(self, *args, **kwargs)

CheckpointOps._commit_checkpoint = held
from turnback.server.app import main
sys.exit(main())
"""


async def _until(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} not made within {timeout}s"
        await asyncio.sleep(0.01)


async def test_shutdown_waits_for_a_checkpoint_off_the_loop(tmp_path: Path, ws: Path) -> None:
    started_at, release = tmp_path / "started", tmp_path / "release"
    command = [sys.executable, "-c", HOLD, str(started_at), str(release)]
    try:
        async with started(ws, command=command) as client:
            checkpoint = asyncio.ensure_future(
                client.call("turnback/createCheckpoint", {"label": "held"}))
            await _until(started_at)
            shutdown = asyncio.ensure_future(client.shutdown_async(None))
            # the close waits for the held checkpoint; the loop still answers. Before, the
            # close waited on the loop: this request got no answer until the release.
            status = await client.call("turnback/status", {}, timeout=10)
            assert status["folder"] == str(ws)
            assert not shutdown.done(), "shutdown answered before the checkpoint ended"
            release.touch()
            res = await asyncio.wait_for(checkpoint, 30)
            await asyncio.wait_for(shutdown, 30)
            assert res["checkpoint"]
            # ``started`` sends shutdown again (answered again) and exit
    finally:
        release.touch()  # a failed run's server is let go, not left holding
    lines = (ws / ".turnback" / "checkpoints.jsonl").read_bytes().splitlines()
    records = [json.loads(line) for line in lines]  # every line whole
    assert [r.get("label") for r in records] == ["held"]
