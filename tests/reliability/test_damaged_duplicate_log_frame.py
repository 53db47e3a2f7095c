"""Red-team pass over format 3's object log (redteam10).

An object held twice, once in a log frame whose bytes are damaged (a bit flipped on disk,
a log copied back from a backup and altered) and once intact elsewhere: the index keeps
one place per object, and the damaged copy must neither hide the good one from reads nor
make gc remove the good one. A planted log longer than any writer's is read no further
than the longest a writer makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import NotFound
from turnback.objects import packlog
from turnback.objects.objectstore import BLOB, hash_bytes
from turnback.objects.packlog import LogFile
from turnback.objects.packs import PackWriter

A = b"kept once, intact\n" * 50


def _store_with_a_damaged_second_log(tmp_path: Path) -> tuple[Path, str]:
    """A checkpoint of a.txt and b.txt in one log, and a second log holding a.txt's blob
    again (as a process that stored it at the same moment would) whose block is damaged."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(A)
    (ws / "b.txt").write_text("the first log's other object\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        folder = store.root / "objects" / "log"
        blob = store.objects.put(BLOB, A)
    w = PackWriter(folder.parent / "pack", 3, in_memory=True)
    w.add(blob, BLOB + b"\0" + A)
    assert w.seal()
    log = LogFile(folder)
    log.append(*w.frame_parts(), b"")
    log.close()
    data = bytearray(log.path.read_bytes())
    for at in range(40, 60):  # inside the frame's block (it starts at byte 28)
        data[at] ^= 0xFF
    # named to sort after the first log: its rows are read last and win the index
    (folder / "log-99999999999-ffffffffffffffff").write_bytes(bytes(data))
    log.path.unlink()
    return ws, cp.id


def test_a_damaged_copy_in_a_log_does_not_hide_the_intact_one(tmp_path: Path) -> None:
    ws, cp = _store_with_a_damaged_second_log(tmp_path)
    with Store.open(ws) as store:
        assert store.read_file(cp, "a.txt") == A


def test_gc_keeps_the_intact_copy_of_an_object_whose_other_copy_is_damaged(
        tmp_path: Path) -> None:
    ws, cp = _store_with_a_damaged_second_log(tmp_path)
    with Store.open(ws) as store:
        store.gc()
    with Store.open(ws) as store:
        assert store.read_file(cp, "a.txt") == A
        # the damaged copy was not needed: merged away with the log that held it
        assert store.fsck().damaged == []
        assert list((store.root / "objects" / "log").iterdir()) == []


def test_a_log_is_read_no_further_than_a_writer_makes_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes past ``READ_MAX`` (a writer rolls to a new log before) are never read: a
    planted log of millions of empty frames costs an open no more than the longest real
    log. Here the bound is made the end of the first frame."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("first\n")
    with Store.open(ws) as store:
        first = store.checkpoint()
        (log,) = (store.root / "objects" / "log").iterdir()
        first_end = log.stat().st_size
        (ws / "b.txt").write_text("past the bound\n")
        second = store.checkpoint()
    assert log.stat().st_size > first_end
    monkeypatch.setattr(packlog, "READ_MAX", first_end)
    with Store.open(ws) as store:
        assert store.read_file(first.id, "a.txt") == b"first\n"
        with pytest.raises(NotFound):
            store.read_file(second.id, "b.txt")  # its frame is past the bound: not read
        (named,) = [d for d in store.fsck().damaged if d["what"] == "log"]
        assert named["id"] == log.name and "longer than any log" in named["problem"]


def test_a_record_put_back_from_its_log_keeps_keys_this_version_does_not_know(
        tmp_path: Path) -> None:
    """A checkpoint line a crash took, put back from its frame: written as its writer wrote
    it. A newer Turnback may add a key readers ignore (as ``origin`` was added, version
    unchanged); before, the line put back was this version's rewrite, without that key."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        folder = store.root / "objects" / "log"
        lines = store.root / "checkpoints.jsonl"
    record = {**json.loads(lines.read_bytes().splitlines()[-1]), "id": "feedfacecafe",
              "eventId": None, "future": {"kept": [1, 2]}}
    w = PackWriter(folder.parent / "pack", 3, in_memory=True)  # a writer's frame holds one
    w.add(hash_bytes(BLOB, b"a\n"), BLOB + b"\0" + b"a\n")
    assert w.seal()
    log = LogFile(folder)  # a newer writer's frame whose line the crash took
    log.append(*w.frame_parts(), json.dumps(record).encode())
    log.close()
    with Store.open(ws) as store:
        assert store.read_file("feedfacecafe", "a.txt") == b"a\n"
        (back,) = [json.loads(x) for x in lines.read_bytes().splitlines()
                   if b"feedfacecafe" in x]
        assert back["future"] == {"kept": [1, 2]} and back["tree"] == cp.tree
