"""The object log (objects/packlog.py, FORMAT.md "The object log"): a small checkpoint's
objects and record in one frame, one disk wait; what a crash, a hand or a gc leaves."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from turnback import Checkpoint, Store
from turnback.objects import objectstore, packlog, packs
from turnback.store import checkpoint_index
from turnback.store.config import FORMAT_VERSION
from wsutil import age_tree, write


def logs(store: Store) -> list[Path]:
    """The logs a reader reads (a FUSE file system keeps a removed file that a process
    still has open as ``.fuse_hidden…``, which is none)."""
    folder = store.objects.root / "log"
    return [folder / n for n in packlog.log_names(folder)]


def pack_files(store: Store) -> list[str]:
    folder = store.objects.root / "pack"
    return sorted(os.listdir(folder)) if folder.exists() else []


def edit(ws: Path, tag: str, n: int = 10) -> None:
    for i in range(n):
        write(ws, f"d{i % 3}/f{i}.txt", f"{tag} {i}\n" * 20)
    age_tree(ws)


def _read_back(ws: Path, cp: Checkpoint, tag: str) -> None:
    """Another process reads ``cp``'s d0/f0.txt as ``edit(ws, tag)`` wrote it, and fsck
    finds the store whole."""
    fresh = Store.open(ws)
    assert fresh.read_file(cp.id, "d0/f0.txt") == f"{tag} 0\n".encode() * 20
    assert fresh.fsck().ok


def _second_line_lost(ws: Path, torn: int = 0,
                      label: str | None = None) -> tuple[Store, Checkpoint, Checkpoint]:
    """Two checkpoints (``edit`` a, then b); the second's line cut from checkpoints.jsonl
    as a power cut cuts an unsynced tail (``torn`` bytes of it left), its log frame kept."""
    edit(ws, "a")
    store = Store.open(ws)
    first = store.checkpoint()
    index = store.root / "checkpoints.jsonl"
    kept = index.stat().st_size
    edit(ws, "b")
    second = store.checkpoint(label=label)
    with open(index, "r+b") as f:
        f.truncate(kept + torn)
    return store, first, second


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each disk wait of this thread: a ``fsync_all`` (its syncs run together: one
    wait), or an ``fsync``/``fdatasync`` made outside one."""
    seen: list[str] = []
    inside = threading.local()
    real_all = objectstore.fsync_all

    def grouped(*a: Any, **k: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            seen.append("fsync_all")
        inside.on = True
        try:
            real_all(*a, **k)
        finally:
            inside.on = False

    def one(name: str, real: Callable[[int], None]) -> Callable[[int], None]:
        def call(fd: int) -> None:
            if (threading.current_thread() is threading.main_thread()
                    and not getattr(inside, "on", False)):
                seen.append(name)
            real(fd)
        return call

    for mod in (objectstore, packlog):
        monkeypatch.setattr(mod, "fsync_all", grouped)
    monkeypatch.setattr(os, "fsync", one("fsync", os.fsync))
    if hasattr(os, "fdatasync"):
        monkeypatch.setattr(os, "fdatasync", one("fdatasync", os.fdatasync))
    yield seen


def test_a_small_checkpoint_waits_for_the_disk_once_and_makes_no_file(
        ws: Path, waits: list[str]) -> None:
    """Before the log: the pack, its index and their folder together, then the record:
    two waits, and two new files (the pack and its index) every checkpoint."""
    edit(ws, "a")
    with Store.open(ws) as store:
        store.checkpoint()  # the first: its log is made (and its name synced)
        edit(ws, "b")
        store.checkpoint()
        before = (pack_files(store), logs(store))
        edit(ws, "c")
        waits.clear()
        cp = store.checkpoint()
        assert waits == ["fdatasync" if hasattr(os, "fdatasync") else "fsync"]
        assert (pack_files(store), logs(store)) == before, "a file was made"
    _read_back(ws, cp, "c")


def test_the_frame_holds_the_objects_and_the_record(ws: Path) -> None:
    edit(ws, "a")
    store = Store.open(ws)
    cp = store.checkpoint(label="one")
    (log,) = logs(store)
    fd = os.open(log, os.O_RDONLY)
    try:
        found, end = packlog.frames(fd, 0, os.fstat(fd).st_size)
        assert end == os.fstat(fd).st_size and len(found) == 1
        assert packlog.verify(fd, found[0])
    finally:
        os.close(fd)
    assert orjson.loads(found[0].record)["id"] == cp.id
    names = {row[:32].hex() for row in (found[0].rows[i: i + 52]
                                        for i in range(0, len(found[0].rows), 52))}
    assert cp.tree in names


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names descriptors in /proc")
def test_a_record_is_put_back_only_after_its_log_is_synced(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process may open the store while a writer's frame is written and not yet
    synced (a rewind's safety frame waits for its journal): the line it puts back must not
    reach checkpoints.jsonl before the frame is on disk, or a power cut keeps the line
    without its objects."""
    store, _, second = _second_line_lost(ws)  # the line not yet appended
    index = store.root / "checkpoints.jsonl"
    order: list[str] = []
    real_fsync, real_append = os.fsync, checkpoint_index.append_lines

    def fsync(fd: int) -> None:
        order.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def append(path: Path, lines: list[Any], **kw: Any) -> None:
        order.append(f"append {path}")
        real_append(path, lines, **kw)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(checkpoint_index, "append_lines", append)
    fresh = Store.open(ws)
    assert second.id in {c.id for c in fresh.checkpoints()}
    log = str(logs(store)[0])
    assert log in order and f"append {index}" in order, order
    assert order.index(log) < order.index(f"append {index}"), order

@pytest.mark.parametrize("log_end", ["whole", "torn"])
def test_a_record_lost_from_checkpoints_jsonl_is_put_back(ws: Path, log_end: str) -> None:
    """A power cut may lose checkpoints.jsonl's unsynced tail: the log frame, synced
    before the answer, brings the record back at the next open (read from the log's end
    back; from its start when its end is a frame that was never finished)."""
    # gone, and a torn start of the line left
    store, first, second = _second_line_lost(ws, torn=7, label="answered")
    index = store.root / "checkpoints.jsonl"
    if log_end == "torn":
        with open(logs(store)[0], "ab") as f:
            f.write(b"TBFR" + os.urandom(300))
    fresh = Store.open(ws)
    assert [c.id for c in fresh.checkpoints()] == [first.id, second.id]
    assert fresh.read_file(second.id, "d0/f0.txt") == b"b 0\n" * 20
    assert fresh.fsck().ok
    again = Store.open(ws)  # put back once, not at every open
    assert index.read_bytes().count(b"\"id\":\"" + second.id.encode()) == 1
    assert [c.id for c in again.checkpoints()] == [first.id, second.id]


def test_a_dropped_checkpoint_is_not_put_back(ws: Path) -> None:
    edit(ws, "a")
    store = Store.open(ws)
    old = store.checkpoint()
    edit(ws, "b")
    store.checkpoint()
    store.index.drop([old.id], fsync=False)
    assert old.id not in {c.id for c in Store.open(ws).checkpoints()}


def test_a_torn_frame_is_ignored_and_the_next_writer_starts_a_new_log(ws: Path) -> None:
    edit(ws, "a")
    store = Store.open(ws)
    cp = store.checkpoint()
    (log,) = logs(store)
    whole = log.stat().st_size
    edit(ws, "b")
    store.checkpoint()
    os.truncate(log, whole + (log.stat().st_size - whole) // 2)  # as a crash mid-write
    # (that checkpoint's record stays in checkpoints.jsonl: its objects are gone, as an
    # unsynced frame's would be; here only the frames before it are asked for)
    fresh = Store.open(ws)
    assert fresh.read_file(cp.id, "d0/f0.txt") == b"a 0\n" * 20
    names = {d["what"] for d in fresh.fsck().damaged}
    assert "log" not in names, "a torn tail is an unfinished write, not damage"
    edit(ws, "c")
    nxt = fresh.checkpoint()
    assert len(logs(fresh)) == 2
    other = Store.open(ws)
    assert other.read_file(nxt.id, "d0/f0.txt") == b"c 0\n" * 20


def test_a_frame_altered_by_hand_is_named_by_fsck_and_never_restored(ws: Path) -> None:
    edit(ws, "a")
    store = Store.open(ws)
    store.checkpoint()
    index = store.root / "checkpoints.jsonl"
    kept = index.stat().st_size
    edit(ws, "b")
    cp = store.checkpoint()
    log = logs(store)[0]
    data = bytearray(log.read_bytes())
    at = data.rindex(cp.id.encode())
    data[at - 40] ^= 0x01  # a byte of the record (before its id): the hash no longer holds
    log.write_bytes(bytes(data))
    with open(index, "r+b") as f:
        f.truncate(kept)
    fresh = Store.open(ws)
    assert cp.id not in {c.id for c in fresh.checkpoints()}
    rep = fresh.fsck()
    assert [d["what"] for d in rep.damaged] == ["log"]
    assert "does not match its hash" in rep.damaged[0]["problem"]


def test_planted_logs_are_bounded_and_never_followed(ws: Path, tmp_path: Path) -> None:
    edit(ws, "a")
    store = Store.open(ws)
    cp = store.checkpoint()
    folder = store.objects.root / "log"
    # a frame claiming 4 GiB, garbage, a link to a file outside, a name no writer gives
    huge = packlog.LOG_MAGIC + packlog._HEAD.pack(b"TBFR", 0xFFFFFFFF, 0xFFFFFF00, 5, 5)
    (folder / "log-1-00000000000000aa").write_bytes(huge)
    (folder / "log-1-00000000000000bb").write_bytes(os.urandom(5000))
    secret = tmp_path / "secret"
    secret.write_bytes(b"not the store's")
    (folder / "log-1-00000000000000cc").symlink_to(secret)
    (folder / "log-x").write_bytes(b"anything")
    # a well-formed frame whose record names a tree stored nowhere
    rec = orjson.dumps({**cp.to_json(), "id": "planted00001", "tree": "ab" * 32})
    (folder / "log-1-00000000000000dd").write_bytes(
        packlog.LOG_MAGIC + packlog.encode(len(packlog.LOG_MAGIC), [], b"", rec))
    fresh = Store.open(ws)
    assert [c.id for c in fresh.checkpoints()] == [cp.id], "a record naming nothing stored"
    assert fresh.read_file(cp.id, "d0/f0.txt") == b"a 0\n" * 20
    edit(ws, "b")
    nxt = fresh.checkpoint()
    assert Store.open(ws).read_file(nxt.id, "d0/f0.txt") == b"b 0\n" * 20
    assert secret.read_bytes() == b"not the store's"


def test_two_writers_at_once_each_append_their_own_log(ws: Path) -> None:
    edit(ws, "base")
    a, b = Store.open(ws), Store.open(ws)
    a.checkpoint()
    made = []
    for i in range(4):
        edit(ws, f"r{i}", n=4)
        made.append((a if i % 2 else b).checkpoint(label=f"r{i}"))
    assert len(logs(a)) == 2
    errors: list[BaseException] = []

    def loop(s: Store, tag: str) -> None:
        try:
            for i in range(5):
                write(ws, f"{tag}/f{i}", f"{tag} {i}")
                made.append(s.checkpoint(label=f"{tag}{i}"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=(s, t)) for s, t in ((a, "x"), (b, "y"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    fresh = Store.open(ws)
    assert {c.id for c in made} <= {c.id for c in fresh.checkpoints()}
    rep = fresh.fsck()
    assert rep.ok, rep.damaged


def test_gc_merges_the_logs_and_a_writer_whose_log_went_starts_another(ws: Path) -> None:
    edit(ws, "a")
    server = Store.open(ws)  # keeps its store (and its log) open, as a server does
    server.checkpoint()
    edit(ws, "b")
    kept = server.checkpoint()
    assert logs(server)
    Store.open(ws).gc()  # another process
    assert not logs(server), "gc leaves no log behind"
    assert Store.open(ws).read_file(kept.id, "d0/f0.txt") == b"b 0\n" * 20
    edit(ws, "c")
    nxt = server.checkpoint()  # its old log was removed: a frame there would be lost
    _read_back(ws, nxt, "c")


def test_gc_keeps_a_checkpoint_whose_line_a_crash_lost(ws: Path) -> None:
    store, _, cp = _second_line_lost(ws)
    from turnback.store import gc
    gc.collect(store)  # this process's view, not reopened: gc restores the line itself
    _read_back(ws, cp, "b")


def test_a_large_batch_still_writes_a_pack(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packs, "LOG_BYTES", 100)
    edit(ws, "a")
    store = Store.open(ws)
    cp = store.checkpoint()
    assert not logs(store) and any(n.endswith(".idx") for n in pack_files(store))
    assert Store.open(ws).read_file(cp.id, "d0/f0.txt") == b"a 0\n" * 20


def test_a_refused_rewind_leaves_its_scan_objects_written(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety checkpoint's batch is held for its record; a rewind refused before
    the record leaves the scan as the next one's base: its objects must reach the disk
    before the stat cache that names them."""
    from turnback.errors import Conflict
    edit(ws, "a")
    store = Store.open(ws)
    cp = store.checkpoint()
    edit(ws, "b")

    def refuse(_plan: object) -> None:
        raise Conflict("refused after the scan")

    monkeypatch.setattr(store, "_check_objects", refuse)
    with pytest.raises(Conflict):
        store.rewind(cp.id)
    store.close()
    fresh = Store.open(ws)
    nxt = fresh.checkpoint()
    assert Store.open(ws).read_file(nxt.id, "d0/f0.txt") == b"b 0\n" * 20
    assert Store.open(ws).fsck().ok


def test_a_version_2_store_is_read_as_it_is_and_written_as_version_3(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr(packs, "LOG_BYTES", 0)  # the packs a version 2 Turnback writes
        edit(ws, "a")
        store = Store.open(ws)
        old = store.checkpoint()
        assert not logs(store)
    cfg = store.root / "config.json"
    data = orjson.loads(cfg.read_bytes())
    cfg.write_bytes(orjson.dumps({**data, "formatVersion": 2}))
    reopened = Store.open(ws)
    assert orjson.loads(cfg.read_bytes())["formatVersion"] == FORMAT_VERSION == 3
    assert reopened.read_file(old.id, "d0/f0.txt") == b"a 0\n" * 20
    edit(ws, "b")
    new = reopened.checkpoint()
    assert logs(reopened)
    fresh = Store.open(ws)
    assert fresh.read_file(old.id, "d0/f0.txt") == b"a 0\n" * 20
    assert fresh.read_file(new.id, "d0/f0.txt") == b"b 0\n" * 20
    assert fresh.fsck().ok


def test_a_log_deleted_by_hand_is_not_trusted_by_the_next_checkpoint(ws: Path) -> None:
    """As for a pack (tests/reliability/test_pack_removed_without_gc.py): the content of a log
    removed by hand, back in the workspace, is stored again by the long-lived store."""
    edit(ws, "a")
    f = ws / "d0" / "f0.txt"
    with Store.open(ws) as store:
        store.checkpoint()
        f.write_text("only in the lost log\n")
        store.checkpoint(dirty={"d0/f0.txt"})
        for log in logs(store):
            log.unlink()
        f.write_text("another\n")
        store.checkpoint(dirty={"d0/f0.txt"})
        f.write_text("only in the lost log\n")
        cp = store.checkpoint(dirty={"d0/f0.txt"})
    with Store.open(ws) as fresh:
        assert fresh.read_file(cp.id, "d0/f0.txt") == b"only in the lost log\n"


def test_objects_written_ahead_are_synced_before_a_record_names_them(
        ws: Path, waits: list[str]) -> None:
    """A server's read-ahead (``prepare``) writes a frame without a record; the checkpoint
    that follows with nothing new commits only a record naming those objects: the frame
    must be on disk first."""
    edit(ws, "a")
    with Store.open(ws) as store:
        store.checkpoint()
        edit(ws, "b")
        waits.clear()
        assert store.prepare({f"d{i % 3}/f{i}.txt" for i in range(10)})
        assert waits, "the read-ahead's frame was not synced"
        cp = store.checkpoint(dirty=set())
    assert Store.open(ws).read_file(cp.id, "d0/f0.txt") == b"b 0\n" * 20


def test_a_record_too_large_for_a_frame_goes_to_a_pack_and_checkpoints_jsonl(
        ws: Path, monkeypatch: pytest.MonkeyPatch, waits: list[str]) -> None:
    """A record with thousands of skipped files could pass what a reader takes of one
    frame: the objects then go to a pack and the record waits on its own, as before."""
    edit(ws, "a")
    store = Store.open(ws)
    store.checkpoint()
    before = logs(store)
    monkeypatch.setattr(objectstore, "FRAME_MAX", 100)
    edit(ws, "b")
    waits.clear()
    cp = store.checkpoint()
    assert len(waits) == 2 and logs(store) == before
    assert Store.open(ws).read_file(cp.id, "d0/f0.txt") == b"b 0\n" * 20


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_a_closed_store_keeps_no_descriptor_of_its_log(ws: Path) -> None:
    """Each open Store wrote its small checkpoints to a log it kept open past ``close``: a
    process opening stores again and again (the test suite, a script) ran out of descriptors
    below 1,024, where ``select`` stops working."""
    before = len(os.listdir("/proc/self/fd"))
    for i in range(5):
        with Store.open(ws, create=True) as store:
            edit(ws, f"round {i}", n=3)
            store.checkpoint()
            assert logs(store)
        assert len(os.listdir("/proc/self/fd")) == before, f"round {i}"


def test_a_store_never_closed_keeps_no_descriptor_once_collected(ws: Path) -> None:
    """``Store.open(ws).checkpoint()`` with no ``close``, as many tests and scripts write
    it: once the store is gone, so is its log's descriptor (the reliability suite kept
    ~1,100 of them and the agents' watcher's ``select`` then failed). A second ``close``
    closes nothing else."""
    import gc

    Store.open(ws, create=True).checkpoint()
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for i in range(5):
        edit(ws, f"round {i}", n=3)
        Store.open(ws).checkpoint()
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before
    store = Store.open(ws)
    edit(ws, "last", n=3)
    store.checkpoint()
    store.close()
    r, w = os.pipe()  # given the number the log had, perhaps: not closed by a second close
    try:
        store.close()
        os.write(w, b"x")
        assert os.read(r, 1) == b"x"
    finally:
        os.close(r)
        os.close(w)
