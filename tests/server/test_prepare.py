"""The server reads quiet changes ahead of the next checkpoint (prepare.py)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from turnback import Store
from turnback.fs.locks import rw_lock
from turnback.objects import packlog

from .conftest import TurnbackClient, started


async def _until_prepared(client: TurnbackClient, n: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while (await client.call("turnback/status", {}))["preparedPaths"] < n:
        if time.monotonic() > deadline:
            raise AssertionError(f"the server did not prepare {n} paths within {timeout}s")
        await asyncio.sleep(0.05)


async def test_quiet_changes_are_read_before_the_checkpoint(
    client: TurnbackClient, ws: Path
) -> None:
    first = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]
    (ws / "src" / "app.py").write_text("print('prepared')\n")
    (ws / "notes.txt").write_text("notes\n")
    await _until_prepared(client, 2)
    status = await client.call("turnback/status", {})
    assert status["dirtyPaths"] == 2
    (ws / "README.md").write_text("changed after the preparation\n")
    res = await client.call("turnback/createCheckpoint", {"label": "after"})
    assert res["incremental"] is True
    assert res["dirtyPaths"] == 3 and res["preparedPaths"] == 2
    cp = res["checkpoint"]
    changes = await client.call("turnback/changes", {"from": first["id"], "to": cp["id"]})
    assert {c["path"]: c["status"] for c in changes["changes"]} == {
        "src/app.py": "modified", "notes.txt": "added", "README.md": "modified"}
    got = await client.call("turnback/fileContent", {"checkpoint": cp["id"], "path": "src/app.py"})
    assert got["text"] == "print('prepared')\n"
    assert (await client.call("turnback/status", {}))["preparedPaths"] == 0


async def test_rewind_after_a_preparation_can_be_undone(client: TurnbackClient, ws: Path) -> None:
    """The safety checkpoint of a rewind is the prepared tree: undo brings the edit back."""
    first = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]
    (ws / "src" / "app.py").write_text("print('agent edit')\n")
    await _until_prepared(client, 1)
    res = await client.call("turnback/rewind", {"checkpoint": first["id"]})
    assert res["written"] == ["src/app.py"]
    assert (ws / "src" / "app.py").read_text() == "print('hello')\n"
    await client.call("turnback/undo", {})
    assert (ws / "src" / "app.py").read_text() == "print('agent edit')\n"


async def test_preparing_can_be_turned_off(ws: Path) -> None:
    async with started(ws, TURNBACK_PREPARE="0") as client:
        await client.wait_watching()
        await client.call("turnback/createCheckpoint", {})
        (ws / "src" / "app.py").write_text("print('edit')\n")
        deadline = time.monotonic() + 10
        while (st := await client.call("turnback/status", {}))["dirtyPaths"] < 1:
            assert time.monotonic() < deadline, "the watcher never saw the edit"
            await asyncio.sleep(0.02)
        assert st["preparedPaths"] == 0
        res = await client.call("turnback/createCheckpoint", {})
        assert res["dirtyPaths"] == 1 and res["preparedPaths"] == 0


def _log_bytes(ws: Path) -> int:
    folder = ws / ".turnback" / "objects" / "log"
    return sum((folder / n).stat().st_size for n in packlog.log_names(folder))


async def test_a_held_log_is_folded_back_to_the_configured_level_once_quiet(
    client: TurnbackClient, ws: Path
) -> None:
    """Fails before: the server's log kept each checkpoint's frame (level 1) until another
    process merged it past MERGE_AT logs; now its raw frames go to a pack once quiet."""
    await client.call("turnback/createCheckpoint", {})
    text = "folded once quiet\n" * 500
    (ws / "src" / "app.py").write_text(text)
    res = await client.call("turnback/createCheckpoint", {"label": "at once"})
    cp = res["checkpoint"]
    deadline = time.monotonic() + 10
    while _log_bytes(ws):  # every frame merged into a pack, the next log made empty
        assert time.monotonic() < deadline, "the server's log was not folded within 10 s"
        await asyncio.sleep(0.05)
    with Store.open(ws) as other:  # the checkpoint, listed and read from the pack
        assert cp["id"] in [c.id for c in other.checkpoints()]
        assert other.file_content(cp["id"], "src/app.py").text == text
    got = await client.call("turnback/fileContent", {"checkpoint": cp["id"], "path": "src/app.py"})
    assert got["text"] == text
    (ws / "notes.txt").write_text("after the fold\n")
    again = (await client.call("turnback/createCheckpoint", {"label": "next"}))["checkpoint"]
    got = await client.call("turnback/fileContent", {"checkpoint": again["id"],
                                                     "path": "notes.txt"})
    assert got["text"] == "after the fold\n"


async def test_a_fold_the_gc_lock_put_off_is_tried_again_without_another_write(
    client: TurnbackClient, ws: Path
) -> None:
    """Fails before: a fold that found the gc lock held (a CLI writer, a gc) was dropped,
    and the checkpoint's raw frames stayed raw until this server's next write (for ever,
    if there was none); now the preparer tries again once the lock may be free."""
    await client.call("turnback/createCheckpoint", {})
    # as another process folding (fold28: a CLI writer's shared gc lock no longer puts a
    # fold off; a gc's exclusive one would keep the checkpoint out too)
    with rw_lock(ws / ".turnback" / "locks" / "fold", exclusive=True):
        (ws / "src" / "app.py").write_text("raw until folded\n" * 400)
        await client.call("turnback/createCheckpoint", {"label": "held"})
        assert _log_bytes(ws)
        (ws / "notes.txt").write_text("a change to prepare\n")
        # the quiet moment's run prepares, then finds the fold lock busy
        await _until_prepared(client, 1)
        assert _log_bytes(ws)
    deadline = time.monotonic() + 5
    while _log_bytes(ws):
        assert time.monotonic() < deadline, "the put-off fold was not tried again within 5 s"
        await asyncio.sleep(0.05)


async def test_a_starting_server_folds_the_raw_frames_a_killed_one_left(ws: Path) -> None:
    """A server killed before its quiet moment left its checkpoint's raw frames (~12
    times their folded bytes): the next server's first quiet moment folds them
    (``Store.fold_left``), with no request. Passes at ``802c159`` too (its start's own
    fold merged every log); fails here with ``fold_left`` not asked (the fold takes only
    its own log since fold28); ``tests/store/test_fold_off_path.py`` fails before."""
    with Store.open(ws, create=True) as store:
        store.checkpoint(label="walk")
        store.merge_logs(at_least=0)
    killed = Store.open(ws)
    killed.objects.raw_held = True
    text = "raw until a server folds it\n" * 400
    (ws / "src" / "app.py").write_text(text)
    cp = killed.checkpoint(label="killed")
    log = killed.objects._log
    assert log is not None
    killed.objects._log = None  # as a SIGKILL: the log stays as written
    log.close()
    killed.close()
    assert log.path.stat().st_size
    async with started(ws) as client:
        deadline = time.monotonic() + 10
        while log.path.exists():  # merged into a pack at the configured level
            assert time.monotonic() < deadline, "the raw frames were not folded within 10 s"
            await asyncio.sleep(0.05)
        got = await client.call("turnback/fileContent", {"checkpoint": cp.id,
                                                         "path": "src/app.py"})
        assert got["text"] == text
