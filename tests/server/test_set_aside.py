"""The language server says what the store set aside (trust19): ``turnback/status`` lists
each cause (``setAside``) while it is there, and ``window/showMessage`` says it once. On
main neither the field nor any message came."""

from __future__ import annotations

import asyncio
from pathlib import Path

from turnback.objects.packlog import LOG_MAGIC, encode

from .conftest import TurnbackClient

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
