"""Error paths: SPEC's codes, a message naming the field or id, and a server that keeps going."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import TurnbackClient, make_workspace, started

INVALID, NOT_FOUND, CONFLICT, DAMAGED, UNSAFE = -32602, -32001, -32002, -32003, -32004

# (method, params, code, words the message must hold); a store with one checkpoint exists.
CASES: list[tuple[str, Any, int, tuple[str, ...]]] = [
    ("turnback/status", [1, 2], INVALID, ("params must be a JSON object",)),
    ("turnback/status", {"folder": 7}, INVALID, ("'folder'", "string")),
    ("turnback/status", {"folder": "file:///no/such/folder"}, NOT_FOUND, ("'folder'",)),
    ("turnback/status", {"folder": "http://example.com/x"}, INVALID, ("'folder'", "file:")),
    ("turnback/sessions", {"offset": -1}, INVALID, ("'offset'",)),
    ("turnback/sessions", {"limit": "ten"}, INVALID, ("'limit'", "integer")),
    ("turnback/sessions", {"limit": 1.5}, INVALID, ("'limit'",)),
    ("turnback/sessions", {"query": ["x"]}, INVALID, ("'query'",)),
    ("turnback/session", {}, INVALID, ("'sessionId'", "required")),
    ("turnback/session", {"sessionId": "../etc"}, INVALID, ("'sessionId'",)),
    ("turnback/session", {"sessionId": "nope"}, NOT_FOUND, ("'sessionId'", "nope")),
    ("turnback/session", {"sessionId": "workspace", "limit": 0}, INVALID, ("'limit'",)),
    ("turnback/checkpoints", {"sessionId": "ghost"}, NOT_FOUND, ("ghost",)),
    ("turnback/createCheckpoint", {"sessionId": "ghost"}, NOT_FOUND, ("ghost",)),
    ("turnback/createCheckpoint", {"label": {"a": 1}}, INVALID, ("'label'",)),
    ("turnback/createCheckpoint", {"auto": "yes"}, INVALID, ("'auto'",)),
    ("turnback/changes", {}, INVALID, ("'from'", "required")),
    ("turnback/changes", {"from": "ffffffffffff"}, NOT_FOUND, ("'from'", "ffffffffffff")),
    ("turnback/changes", {"from": "latest", "to": "zzzz9"}, NOT_FOUND, ("'to'", "zzzz9")),
    ("turnback/changes", {"from": "latest", "paths": "src"}, INVALID, ("'paths'",)),
    ("turnback/changes", {"from": "latest", "paths": ["../x"]}, UNSAFE, ("'paths'", "..")),
    ("turnback/changes", {"from": "latest~x"}, INVALID, ("'from'", "latest~N")),
    ("turnback/fileContent", {"checkpoint": "latest"}, INVALID, ("'path'", "required")),
    ("turnback/fileContent", {"path": "a"}, INVALID, ("'checkpoint'", "required")),
    ("turnback/fileContent", {"checkpoint": "latest", "path": "/etc/passwd"}, UNSAFE, ("'path'",)),
    ("turnback/fileContent", {"checkpoint": "latest", "path": "a/../../b"}, UNSAFE, ("'path'",)),
    ("turnback/fileContent", {"checkpoint": "latest", "path": "a\\b"}, UNSAFE, ("'path'",)),
    ("turnback/fileContent", {"checkpoint": "nope1", "path": "a"}, NOT_FOUND, ("'checkpoint'",)),
    ("turnback/rewind", {}, INVALID, ("'checkpoint'", "required")),
    ("turnback/rewind", {"checkpoint": "latest", "mode": "all"}, INVALID, ("'mode'", "files")),
    ("turnback/rewind", {"checkpoint": "latest", "dryRun": 1}, INVALID, ("'dryRun'",)),
    ("turnback/rewind", {"checkpoint": "latest", "paths": ["../../x"]}, UNSAFE, ("'paths'",)),
    ("turnback/rewind", {"checkpoint": "latest", "paths": [""]}, INVALID, ("'paths[0]'",)),
    ("turnback/rewind", {"checkpoint": "abcdef99"}, NOT_FOUND, ("'checkpoint'", "abcdef99")),
    ("turnback/undo", {}, CONFLICT, ("nothing to undo",)),
    ("turnback/undo", {"dryRun": "no"}, INVALID, ("'dryRun'",)),
    ("turnback/fork", {}, INVALID, ("'eventId'", "required")),
    ("turnback/fork", {"eventId": "nope"}, NOT_FOUND, ("'eventId'", "nope")),
    ("turnback/fork", {"eventId": "x", "sessionId": "ghost"}, NOT_FOUND, ("ghost",)),
    ("turnback/import", {}, INVALID, ("'source'", "required")),
    ("turnback/import", {"source": "chatgpt"}, INVALID, ("'source'", "claude-code")),
    ("turnback/gc", {"keepLast": -3}, INVALID, ("'keepLast'",)),
    ("turnback/gc", {"dryRun": None, "quotaBytes": "1GB"}, INVALID, ("'quotaBytes'",)),
]


@pytest.fixture
async def with_store(client: TurnbackClient, ws: Path) -> TurnbackClient:
    await client.call("turnback/createCheckpoint", {})
    return client


async def test_each_error(with_store: TurnbackClient) -> None:
    client = with_store
    for method, params, code, words in CASES:
        await client.fails(method, params, code, *words)
    # ... and the server still answers.
    assert (await client.call("turnback/status", {}))["checkpoints"] == 1


async def test_reads_without_store_say_how_to_start(client: TurnbackClient) -> None:
    await client.fails("turnback/changes", {"from": "latest"}, NOT_FOUND, "no Turnback store")
    await client.fails("turnback/undo", {}, NOT_FOUND, "create a checkpoint")
    await client.fails("turnback/gc", {}, NOT_FOUND, "no Turnback store")


async def test_rewind_never_writes_through_a_symlink(with_store: TurnbackClient, ws: Path) -> None:
    """A folder swapped for a symlink to outside is replaced, never written through."""
    client = with_store
    outside = ws.parent / "outside"
    outside.mkdir()
    cp = (await client.call("turnback/createCheckpoint", {}))["checkpoint"]["id"]
    (ws / "src" / "app.py").unlink()
    (ws / "src").rmdir()
    (ws / "src").symlink_to(outside, target_is_directory=True)
    await client.call("turnback/rewind", {"checkpoint": cp})
    assert list(outside.iterdir()) == [], "nothing was written outside the workspace"
    assert not (ws / "src").is_symlink()
    assert (ws / "src" / "app.py").read_text() == "print('hello')\n"


async def test_a_link_swapped_into_the_objects_is_refused_and_the_server_stays_up(
        with_store: TurnbackClient, ws: Path) -> None:
    """objects/log/ replaced by a link to a folder outside while the server holds the store:
    the checkpoint fails naming it, nothing is written there, the server answers on, and
    checkpoints again once the link is gone (tests/store/test_swapped_links.py: each
    folder)."""
    client = with_store
    await client.call("turnback/createCheckpoint", {})
    outside = ws.parent / "outside"
    outside.mkdir()
    log = ws / ".turnback" / "objects" / "log"
    for f in log.iterdir():
        f.unlink()
    log.rmdir()
    log.symlink_to(outside, target_is_directory=True)
    (ws / "src" / "app.py").write_text("print('swapped')\n")
    await client.fails("turnback/createCheckpoint", {}, UNSAFE, "objects/log")
    assert list(outside.iterdir()) == [], "nothing was written through the link"
    assert (await client.call("turnback/status", {}))["exists"] is True
    log.unlink()
    await client.call("turnback/createCheckpoint", {})


def _link_in_place_of(folder: Path, target: Path) -> None:
    """``folder`` emptied, removed and made a link to ``target``. The server's work after a
    checkpoint's answer (the stat cache's save under the gc lock) may make the folder or a
    lock file in it again meanwhile: swapped again until the link stands (a full run once
    met ``FileExistsError`` at the link)."""
    for _ in range(1000):
        try:
            if folder.is_dir() and not folder.is_symlink():
                for f in folder.iterdir():
                    f.unlink(missing_ok=True)
                folder.rmdir()
            folder.symlink_to(target, target_is_directory=True)
            return
        except OSError:  # made again (EEXIST, ENOTEMPTY) or gone meanwhile: once more
            continue
    raise AssertionError(f"{folder} was made again 1000 times: the link never stood")


async def test_a_link_swapped_for_the_locks_is_refused_and_the_server_stays_up(
        with_store: TurnbackClient, ws: Path) -> None:
    """locks/ replaced by a link while the server holds the store: the checkpoint fails
    naming it, no lock file is made where it points, the server answers on, and checkpoints
    again once the link is gone (tests/store/test_swapped_store_links.py: each folder)."""
    client = with_store
    await client.call("turnback/createCheckpoint", {})
    outside = ws.parent / "outside"
    outside.mkdir()
    _link_in_place_of(ws / ".turnback" / "locks", outside)
    locks = ws / ".turnback" / "locks"
    (ws / "src" / "app.py").write_text("print('swapped')\n")
    await client.fails("turnback/createCheckpoint", {}, UNSAFE, "'locks' is a symlink")
    assert list(outside.iterdir()) == [], "nothing was made through the link"
    assert (await client.call("turnback/status", {}))["exists"] is True
    locks.unlink()
    await client.call("turnback/createCheckpoint", {})


async def test_a_folder_at_the_record_lock_is_named_and_the_server_stays_up(
        with_store: TurnbackClient, ws: Path) -> None:
    """A folder planted at checkpoints.jsonl.lock (opened through the held store root):
    the checkpoint is answered with StoreDamaged naming its path and what to do (was a bare
    "[Errno 21] Is a directory", the internal error's code), the server answers on, and
    checkpoints again once the folder is gone (tests/store/test_lock_is_a_folder.py)."""
    client = with_store
    lock = ws / ".turnback" / "checkpoints.jsonl.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    (ws / "src" / "app.py").write_text("print('planted')\n")
    await client.fails("turnback/createCheckpoint", {}, DAMAGED,
                       f"{lock} is a folder, not a lock file", "Move that folder out of the way")
    assert (await client.call("turnback/status", {}))["exists"] is True
    lock.rmdir()
    await client.call("turnback/createCheckpoint", {})


async def test_a_socket_at_the_record_lock_is_named_and_the_server_stays_up(
        with_store: TurnbackClient, ws: Path) -> None:
    """A socket planted at checkpoints.jsonl.lock: answered with StoreDamaged naming its
    path and what to do (was a bare "[Errno 6] No such device or address", the internal
    error's code -32603), the server answers on, and checkpoints again once it is gone
    (tests/store/test_lock_is_a_socket.py)."""
    import os
    import socket

    client = with_store
    lock = ws / ".turnback" / "checkpoints.jsonl.lock"
    lock.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    os.chdir(lock.parent)  # bound by its name: a socket's path is at most 108 bytes
    try:
        sock.bind(lock.name)
    finally:
        os.chdir(here)
    try:
        (ws / "src" / "app.py").write_text("print('planted')\n")
        await client.fails("turnback/createCheckpoint", {}, DAMAGED,
                           f"{lock} is a socket, not a lock file", "Move it out of the way")
        assert (await client.call("turnback/status", {}))["exists"] is True
    finally:
        sock.close()
    lock.unlink()
    await client.call("turnback/createCheckpoint", {})


async def test_damaged_store_is_reported(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws / ".turnback").mkdir()
    (ws / ".turnback" / "config.json").write_text("{not json")
    async with started(ws) as client:
        await client.fails("turnback/sessions", {}, DAMAGED, "config.json")
        await client.fails("turnback/createCheckpoint", {}, DAMAGED, "config.json")
        (ws / ".turnback" / "config.json").write_text("{}")
        # Fixed on disk: the server picks the store up without a restart.
        assert (await client.call("turnback/status", {}))["exists"] is True


async def test_unknown_method_and_garbage(client: TurnbackClient) -> None:
    from pygls.exceptions import JsonRpcMethodNotFound

    with pytest.raises(JsonRpcMethodNotFound):
        await client.call("turnback/nope", {})
    writer = client.protocol.writer
    assert writer is not None
    body = b"{this is not json"
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert (await client.call("turnback/status", {}))["exists"] is False
