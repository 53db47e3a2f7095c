"""The object logs merged by the process that finds them many (store/logmerge.py): a store
served only by fresh processes keeps a bounded number of logs, whatever else holds them."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged
from turnback.fs.locks import rw_lock
from turnback.objects import merging, packlog
from wsutil import age_tree, run_cli, write


def logs(store_root: Path) -> list[str]:
    return packlog.log_names(store_root / "objects" / "log")


def packs(store_root: Path) -> list[str]:
    folder = store_root / "objects" / "pack"
    return sorted(n for n in os.listdir(folder) if n.endswith(".idx")) if folder.exists() else []


def edit(ws: Path, tag: str) -> None:
    for i in range(3):
        write(ws, f"d{i}/f{i}.txt", f"{tag} {i}\n" * 20)
    age_tree(ws)


def contents(store: Store) -> dict[str, dict[str, bytes]]:
    """Every checkpoint's files, read back (each object checked against its name)."""
    return {cp.id: {p: store.objects.get(b"blob", e.hash) for p, e in store.trees.walk(cp.tree)}
            for cp in store.checkpoints()}


def fresh_checkpoints(ws: Path, n: int, tag: str, merge: bool = True) -> None:
    """``n`` storing checkpoints, each by a new ``Store`` (one log each, as n processes)
    that then does what the CLI does after printing (``merge``)."""
    for i in range(n):
        edit(ws, f"{tag}{i}")
        store = Store.open(ws)
        store.checkpoint(label=f"{tag}{i}")
        store.close()
        if merge:
            store.merge_logs()


def test_fresh_cli_processes_leave_a_bounded_number_of_logs(ws: Path) -> None:
    """Fails before the merge: each fresh process that stored objects left one more log."""
    root = ws / ".turnback"
    counts = []
    for i in range(merging.MERGE_AT + 8):
        edit(ws, f"cli{i}")
        # the plain line goes without click (cli/direct.py), --json after the verb through it
        run_cli(ws, "checkpoint", "-m", f"c{i}", *(["--json"] if i % 2 else []))
        counts.append(len(logs(root)))
    assert max(counts) <= merging.MERGE_AT + 1, counts
    assert counts[-1] < merging.MERGE_AT, counts
    store = Store.open(ws)
    assert len(store.checkpoints()) == merging.MERGE_AT + 8
    files = contents(store)
    assert all(f["d0/f0.txt"].startswith(f"cli{i} 0".encode())
               for i, f in enumerate(files.values()))
    assert store.fsck().ok


def test_many_fresh_writers_keep_logs_and_packs_bounded(ws: Path) -> None:
    """Logs never past the trigger; packs grow with the log of the store's bytes, not with
    the merges (merging.choose)."""
    root = ws / ".turnback"
    edit(ws, "base")
    Store.open(ws).checkpoint(label="base")
    most_logs = most_packs = 0
    for step in range(6):
        fresh_checkpoints(ws, 40, f"s{step}-")
        most_logs = max(most_logs, len(logs(root)))
        most_packs = max(most_packs, len(packs(root)))
    assert most_logs <= merging.MERGE_AT + 1
    assert most_packs <= 8, most_packs
    store = Store.open(ws)
    assert len(store.checkpoints()) == 241
    assert store.fsck().ok


def test_few_logs_are_left_alone(ws: Path) -> None:
    fresh_checkpoints(ws, 3, "a", merge=False)
    store = Store.open(ws)
    assert store.merge_logs() is None
    assert len(logs(ws / ".turnback")) == 3


def test_no_merge_while_a_writer_holds_the_gc_lock(ws: Path) -> None:
    """A checkpoint (or gc) in progress: the merge is skipped at once, not waited for."""
    fresh_checkpoints(ws, merging.MERGE_AT + 1, "a", merge=False)
    store = Store.open(ws)
    with rw_lock(ws / ".turnback" / "locks" / "gc", exclusive=False):
        assert store.merge_logs() is None
    assert len(logs(ws / ".turnback")) == merging.MERGE_AT + 1
    assert store.merge_logs() == (merging.MERGE_AT + 1, 0)
    assert logs(ws / ".turnback") == []


def test_a_live_writer_keeps_working_after_its_log_is_merged_away(ws: Path) -> None:
    """The server's Store holds its log open and its rows in memory while fresh processes
    merge it: it reads the objects from the new pack and writes its next frame to a new
    log; a reader opened before the merge reads them too."""
    edit(ws, "server0")
    server = Store.open(ws)
    first = server.checkpoint(label="server0")
    reader = Store.open(ws)
    before = contents(reader)
    own = logs(ws / ".turnback")
    assert len(own) == 1
    fresh_checkpoints(ws, merging.MERGE_AT + 2, "hook")
    assert own[0] not in logs(ws / ".turnback")  # merged away under the live writer
    assert contents(server)[first.id] == before[first.id]
    assert contents(reader)[first.id] == before[first.id]
    edit(ws, "server1")
    second = server.checkpoint(label="server1")
    assert contents(Store.open(ws))[second.id]["d0/f0.txt"].startswith(b"server1 0")
    # what the server had stored before the merge, stored again by it: still readable
    edit(ws, "server0")
    again = server.checkpoint(label="server0 again")
    assert contents(Store.open(ws))[again.id] == before[first.id]
    server.close()
    reader.close()
    assert Store.open(ws).fsck().ok


def test_two_writers_merging_at_once(ws: Path) -> None:
    """Two processes' merges at the same moment: one does it, the other finds the lock
    taken or nothing left; nothing is lost."""
    fresh_checkpoints(ws, merging.MERGE_AT + 1, "a", merge=False)
    want = contents(Store.open(ws))
    stores = [Store.open(ws), Store.open(ws)]
    results: list[object] = []
    barrier = threading.Barrier(2)

    def merge(s: Store) -> None:
        barrier.wait()
        results.append(s.merge_logs())

    threads = [threading.Thread(target=merge, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in results) == 1, results
    assert logs(ws / ".turnback") == []
    assert contents(Store.open(ws)) == want


def test_records_a_crash_took_are_put_back_and_synced_before_the_logs_go(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """checkpoints.jsonl lost its tail (a power cut): the merge puts the lines back from
    the logs, and syncs the file before any log is removed."""
    fresh_checkpoints(ws, 3, "base")
    index = ws / ".turnback" / "checkpoints.jsonl"
    kept = index.stat().st_size
    fresh_checkpoints(ws, merging.MERGE_AT, "lost", merge=False)
    store = Store.open(ws, create=False)
    want = {cp.id for cp in store.checkpoints()}
    os.truncate(index, kept)  # what a power cut may leave
    before = logs(ws / ".turnback")
    synced: list[tuple[str, bytes, list[str]]] = []  # what was on disk at each sync
    from turnback.store import logmerge

    real_fsync_file = logmerge.fsync_file

    def fsync_file(path: Path | str) -> None:
        synced.append((Path(path).name, Path(path).read_bytes(), logs(ws / ".turnback")))
        real_fsync_file(path)

    monkeypatch.setattr(logmerge, "fsync_file", fsync_file)
    # the merge's own restore (this object was opened before the cut)
    assert store.merge_logs(at_least=0) is not None
    assert {cp.id for cp in Store.open(ws).checkpoints()} == want
    assert logs(ws / ".turnback") == []
    # synced once the lost lines were back, while every log was still there
    ((name, data, present),) = synced
    assert name == "checkpoints.jsonl" and present == before
    assert {orjson_id(line) for line in data.splitlines()} == want


def test_an_old_store_of_500_logs_opens_and_is_brought_back_down(ws: Path) -> None:
    """A format-3 store written before the merge: 500 logs (copies of one log under other
    names, as redteam10's pile: each read, none new). The next CLI checkpoint brings it
    down to none, and everything still reads."""
    edit(ws, "one")
    Store.open(ws).checkpoint(label="one")
    root = ws / ".turnback"
    (only,) = logs(root)
    folder = root / "objects" / "log"
    for i in range(499):
        shutil.copyfile(folder / only, folder / f"log-{900000 + i}-{i:016x}")
    assert len(logs(root)) == 500
    want = contents(Store.open(ws))
    edit(ws, "two")
    run_cli(ws, "checkpoint", "-m", "two")
    assert logs(root) == []
    store = Store.open(ws)
    got = contents(store)
    assert {k: v for k, v in got.items() if k in want} == want and len(got) == 2
    assert store.fsck().ok


def test_a_planted_log_is_never_merged_into_trust(ws: Path) -> None:
    """Files an attacker puts in objects/log/: a name a writer never gives is not read nor
    removed; a frameless file under a writer's name is removed only once an hour old (as
    gc does); a log whose object bytes were altered is kept whole for fsck when no other
    copy holds them, and never copied into the pack."""
    fresh_checkpoints(ws, 4, "a", merge=False)
    folder = ws / ".turnback" / "objects" / "log"
    victim = folder / logs(ws / ".turnback")[0]
    (folder / "log-1-notahexname").write_bytes(b"x" * 100)
    (folder / "log-2-0000000000000000").write_bytes(packlog.LOG_MAGIC + b"junk" * 10)
    old = folder / "log-3-0000000000000000"
    old.write_bytes(b"")
    os.utime(old, (1, 1))
    store = Store.open(ws)
    want = contents(store)
    # alter one object's block in a log (its bytes, not the frame's lengths)
    data = bytearray(victim.read_bytes())
    data[len(packlog.LOG_MAGIC) + 24] ^= 0xFF
    victim.write_bytes(bytes(data))
    # a new Store: one that read the objects before holds their intact blocks in memory
    assert Store.open(ws).merge_logs(at_least=0) is not None
    left = sorted(os.listdir(folder))
    assert "log-1-notahexname" in left  # never read, never removed
    assert "log-2-0000000000000000" in left  # frameless but young
    assert "log-3-0000000000000000" not in left  # frameless and an hour old
    assert victim.name in left  # held objects no other copy gave: kept for fsck
    fresh = Store.open(ws)
    assert not fresh.fsck().ok  # the altered frame is named, not hidden
    readable = 0
    for cp in fresh.checkpoints():
        try:
            files = {p: fresh.objects.get(b"blob", e.hash) for p, e in fresh.trees.walk(cp.tree)}
        except StoreDamaged:
            continue  # the altered log's own checkpoint
        assert files == want[cp.id]
        readable += 1
    assert readable >= len(want) - 1


def test_an_open_reads_only_the_end_of_checkpoints_jsonl_unless_a_record_is_lost(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Restoring records at open looks for each log's last record among the file's last
    lines (checkpoint_index.TAIL_BYTES); the whole file is read only for one not there."""
    from turnback.store import checkpoint_index

    fresh_checkpoints(ws, 6, "a", merge=False)
    reads: list[int] = []
    real = checkpoint_index.CheckpointIndex._refresh

    def counted(self: checkpoint_index.CheckpointIndex) -> None:
        reads.append(1)
        real(self)

    monkeypatch.setattr(checkpoint_index.CheckpointIndex, "_refresh", counted)
    Store.open(ws)
    assert reads == []
    # a torn last line that holds the newest record's id holds nothing: put back whole
    index = ws / ".turnback" / "checkpoints.jsonl"
    lines = index.read_bytes().splitlines(keepends=True)
    want = [orjson_id(line) for line in lines]
    index.write_bytes(b"".join(lines[:-1]) + lines[-1][:-20])
    assert [c.id for c in Store.open(ws).checkpoints()] == want
    assert reads  # read whole to be sure it was lost
    # a record further back than the tail, lost: found by reading the whole file
    monkeypatch.setattr(checkpoint_index, "TAIL_BYTES", 10)
    reads.clear()
    index.write_bytes(b"".join(lines[:3]))
    assert [c.id for c in Store.open(ws).checkpoints()] == want
    assert reads


def orjson_id(line: bytes) -> str:
    import orjson

    value = orjson.loads(line)
    assert isinstance(value, dict)
    return str(value["id"])
