"""A tree nested ``MAX_SCAN_DEPTH`` folders deep through the real server, whose own stack
(pygls, asyncio, its threads) sits under every walk: checkpoints (the walk, the records'
reuse, the watcher's changed paths at once), changes, file content and history, blame,
rewind and undo of a file at the bottom, gc, the CLI's checkpoint handed over. Before
redteam29 a walk reusing the folders' records (four frames a folder: the server's walk at
start, once two full checkpoints were taken) failed with ``RecursionError``; a folder past
the bound is named in ``skipped``."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from turnback import Store
from turnback.snapshot.scan import MAX_SCAN_DEPTH
from wsutil import age_tree

from .conftest import run_cli, started


def _nest(ws: Path, depth: int) -> str:
    rel = "/".join(["d"] * depth)
    os.makedirs(ws / rel)
    for level in (1, 100, depth - 1, depth):
        (ws / "/".join(["d"] * level) / "f.txt").write_text(f"{level}\n")
    return f"{rel}/f.txt"

async def test_every_request_on_a_tree_at_the_bound(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    deep = _nest(ws, MAX_SCAN_DEPTH)
    age_tree(ws)
    with Store.open(ws, create=True) as store:
        first = store.checkpoint().id
        store.checkpoint()  # the folders' signatures, then their records
    async with started(ws) as client:
        await client.wait_watching()  # the server's walk reuses every folder's record
        cps = [(await client.call("turnback/createCheckpoint", {}))["checkpoint"]
               for _ in range(2)]
        assert [cp["skipped"] for cp in cps] == [[], []]
        (ws / deep).write_text("changed\n")
        told = await client.call("turnback/createCheckpoint", {})
        assert told["incremental"] and told["checkpoint"]["files"] == cps[0]["files"]
        changes = await client.call("turnback/changes", {"from": first,
                                                         "to": told["checkpoint"]["id"]})
        assert [c["path"] for c in changes["changes"]] == [deep]
        got = await client.call("turnback/fileContent", {"checkpoint": first, "path": deep})
        assert got["text"] == f"{MAX_SCAN_DEPTH}\n"
        history = await client.call("turnback/fileHistory", {"path": deep})
        assert history["total"] == 2
        blame = await client.call("turnback/blame", {"path": deep})
        assert blame["lineCount"] == 1
        await client.call("turnback/rewind", {"checkpoint": first, "paths": [deep]})
        assert (ws / deep).read_text() == f"{MAX_SCAN_DEPTH}\n"
        await client.call("turnback/undo", {})
        assert (ws / deep).read_text() == "changed\n"
        await client.call("turnback/rewind", {"checkpoint": first})
        assert (ws / deep).read_text() == f"{MAX_SCAN_DEPTH}\n"
        await client.call("turnback/gc", {})
        # the CLI's checkpoint, handed to this server over its socket
        (ws / deep).write_text("by the CLI\n")
        handed = await asyncio.to_thread(run_cli, ws, "--json", "checkpoint")
        assert json.loads(handed)["files"] == cps[0]["files"]
        (ws / "/".join(["d"] * MAX_SCAN_DEPTH) / "d" / "past").mkdir(parents=True)
        past = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]
        assert [s["path"] for s in past["skipped"]] == ["/".join(["d"] * (MAX_SCAN_DEPTH + 1))]
