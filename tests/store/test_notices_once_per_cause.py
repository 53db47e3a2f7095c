"""What the store set aside is told once for each cause (trust19, ``store/notices.py``).
redteam19: the causes are files anyone who can write the store makes, one a planted log.
Each was a message of its own: 200 planted logs were 200 ``window/showMessage`` at one
``turnback/status`` and 200 lines on a command's stderr, and past ``MAX_LINES`` causes
``cache/notices-told`` (bounded) could not hold them all, so some were told again at
every command, forever."""

from __future__ import annotations

from pathlib import Path

from turnback import Store
from turnback.objects.packlog import LOG_MAGIC, encode
from turnback.store import notices


def _plant(store: Store, count: int, first: int = 0) -> None:
    folder = store.root / "objects" / "log"
    for i in range(first, first + count):  # frames with no object: refused, never read
        (folder / f"log-1-{i:016x}").write_bytes(LOG_MAGIC + encode(8, [], b"", b""))


def test_many_refused_logs_are_one_notice_told_once(store: Store, ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    store.checkpoint()
    _plant(store, notices.MAX_LINES + 72)
    found = store.notices()
    assert len(found) <= notices.LOGS_NAMED + 1, len(found)
    assert any(str(notices.MAX_LINES + 72) in n.message and "turnback fsck" in n.message
               for n in found)
    for channel in notices.CHANNELS:
        # a command tells what its open's walk found: a fresh open each time
        with Store.open(ws) as later:
            told = later.untold_notices(channel)
        assert 0 < len(told) <= notices.LOGS_NAMED + 1, (channel, len(told))
        for _ in range(3):  # not again, at any later command
            with Store.open(ws) as later:
                assert later.untold_notices(channel) == []
    _plant(store, 1, first=10_000)  # one more: the folded cause changes, told once more
    assert len(store.untold_notices("server")) == 1
    assert store.untold_notices("server") == []


def test_a_few_refused_logs_are_each_named(store: Store, ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    store.checkpoint()
    _plant(store, notices.LOGS_NAMED)
    found = store.notices()
    assert len(found) == notices.LOGS_NAMED
    assert all(n.kind == "log" and "log-1-" in n.message for n in found)
