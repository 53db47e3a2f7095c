"""The language server says what the store set aside (trust19): ``turnback/status`` lists
each cause (``setAside``) while it is there, and ``window/showMessage`` says it once. On
main neither the field nor any message came."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from store.test_kill_at_journal_retraction import _killed
from turnback import Store
from turnback.objects.packlog import LOG_MAGIC, encode

from .conftest import TurnbackClient, started

PLANTED = "log-1-0123456789abcdef"


async def test_a_refused_log_is_in_status_and_shown_once(
        client: TurnbackClient, ws: Path) -> None:
    await client.call("turnback/createCheckpoint", {"label": "first"})
    st = await client.call("turnback/status", {})
    assert st["setAside"] == []
    planted = ws / ".turnback" / "objects" / "log" / PLANTED
    planted.write_bytes(LOG_MAGIC + encode(8, [], b"", b"") * 50)  # frames with no object
    before = len(client.messages)
    for _ in range(3):
        st = await client.call("turnback/status", {})
        (aside,) = st["setAside"]
        assert aside["kind"] == "log" and PLANTED in aside["message"]
        assert "turnback fsck" in aside["message"]
    for _ in range(100):  # the notification may trail the answer: wait for it
        if len(client.messages) > before:
            break
        await asyncio.sleep(0.01)
    shown = [m.message for m in client.messages[before:]]
    assert len(shown) == 1 and PLANTED in shown[0], shown
    planted.unlink()
    assert (await client.call("turnback/status", {}))["setAside"] == []



async def test_a_rewind_dropped_at_the_servers_open_is_in_status_until_a_rewind_begins(
        tmp_path: Path) -> None:
    """A rewind killed in its journal's sync; the server's open empties the journal
    (trust38): status lists it, the server shows it once, a rewind begun clears it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first").id
    (ws / "a.txt").write_text("two")
    _killed(ws, "in the journal's sync")
    # the journal's key where this test's processes keep it (config() is built at import)
    async with started(ws, XDG_STATE_HOME=os.environ["XDG_STATE_HOME"]) as client:
        before = len(client.messages)
        for _ in range(2):
            st = await client.call("turnback/status", {})
            assert len(st["setAside"]) == 1, st["setAside"]
            (aside,) = st["setAside"]
            assert aside["kind"] == "rewind" and aside["key"].startswith("rewind-dropped:")
            assert f"a rewind to checkpoint {first} (op " in aside["message"]
        for _ in range(100):  # the notification may trail the answer: wait for it
            if len(client.messages) > before:
                break
            await asyncio.sleep(0.01)
        shown = [m.message for m in client.messages[before:]]
        assert len(shown) == 1 and "no file was changed" in shown[0], shown
        assert (ws / "a.txt").read_text() == "two"
        await client.call("turnback/rewind", {"checkpoint": first})
        assert (await client.call("turnback/status", {}))["setAside"] == []
    assert (ws / "a.txt").read_text() == "one"
