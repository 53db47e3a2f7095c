"""A red-team pass over ``fold28`` (branch ``redteam37``): the fold runs under the gc lock
held *shared*, beside other processes' writers, so what a writer wrote and has not synced
yet is now within a fold's reach."""

from __future__ import annotations

import os
import time
from pathlib import Path

from turnback import Store
from turnback.objects.merging import MERGE_AT
from turnback.objects.objectstore import BLOB
from wsutil import age_tree, write


def _raw_checkpoint(store: Store, ws: Path) -> None:
    """A checkpoint whose held batch went out as raw frames (a server's): a fold is due."""
    store.checkpoint(label="walk")
    store.objects.raw_held = True
    files = {f"d{i}/f{i}.txt": f"raw line {i}\n" * 400 for i in range(12)}
    for rel, text in files.items():
        write(ws, rel, text)
    age_tree(ws)
    store.checkpoint(dirty=set(files), label="raw")
    assert store.objects.unfolded


def test_a_fold_that_takes_another_writers_unsynced_pack_does_not_fail_its_sync(
        ws: Path) -> None:
    """Fails before: another process's batch past the log's bound went into a small pack
    (held under the gc lock shared, waiting for its ``sync`` before its commit); a fold,
    under the same shared lock, chose that pack (``merging.choose``), copied it into its
    own synced pack and removed it; the writer's ``sync`` then raised FileNotFoundError
    on the pack's name and its checkpoint (or a rewind's safety checkpoint) failed."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as server:
        _raw_checkpoint(server, ws)
        with Store.open(ws) as writer:
            blobs = [os.urandom(500 << 10) for _ in range(17)]  # 8.3 MiB: past LOG_BYTES
            with writer.objects.batch(fsync=True):
                names = [writer.objects.put(BLOB, b) for b in blobs]
            packs = {p.name for p in (root / "objects" / "pack").glob("*.pack")}
            assert server.fold_held() is True
            taken = packs - {p.name for p in (root / "objects" / "pack").glob("*.pack")}
            assert taken, "the fold took no pack of the writer's: the attack did not run"
            writer.objects.sync()  # before the fix: FileNotFoundError
            for name, data in zip(names, blobs, strict=True):
                assert writer.objects.get(BLOB, name) == data
                assert server.objects.get(BLOB, name) == data
    with Store.open(ws) as again:
        for name, data in zip(names, blobs, strict=True):
            assert again.objects.get(BLOB, name) == data
        assert again.fsck().ok


def test_a_quiet_servers_log_made_ahead_removed_as_stale_loses_no_later_checkpoint(
        ws: Path) -> None:
    """Probed, sound: a server quiet for more than ``STRAY_AGE_S`` holds the log its fold
    made ahead, still empty; a CLI call past ``MERGE_AT`` removes it as a stale empty log
    (under the gc lock taken exclusively). The server's next checkpoint must not append to
    the removed file (``LogFile.usable``: the inode at the name is gone): its objects and
    record are read back by another process, fsck clean."""
    root = ws / ".turnback"
    logs = root / "objects" / "log"
    with Store.open(ws, create=True) as server:
        _raw_checkpoint(server, ws)
        assert server.fold_held() is True
        ahead = server.objects._log
        assert ahead is not None and ahead.path.exists() and ahead.path.stat().st_size == 0
        hour_ago = time.time() - 7200
        planted = []
        for i in range(MERGE_AT):
            p = logs / f"log-{900000 + i}-{i:016x}"
            p.touch()
            planted.append(p)
        for p in [*planted, ahead.path]:
            os.utime(p, (hour_ago, hour_ago))
        with Store.open(ws) as cli:
            assert cli.merge_logs() is None
        assert not ahead.path.exists(), "the stale removal did not run: the attack did not"
        files = {f"late/f{i}.txt": f"after the quiet hour {i}\n" * 200 for i in range(5)}
        for rel, text in files.items():
            write(ws, rel, text)
        age_tree(ws)
        cp = server.checkpoint(dirty=set(files), label="late")
        assert server.objects._log is not ahead
        assert server.fold_held() is True
    with Store.open(ws) as again:
        for rel, text in files.items():
            assert again.file_content(cp.id, rel).text == text
        assert again.fsck().ok



def _raw_fold(store: Store, ws: Path, tag: str) -> None:
    """A raw checkpoint of 60 new files, folded: its log holds enough objects for the fold
    to take the small packs before it (``merging.choose``)."""
    files = {f"{tag}/g{i}.txt": f"{tag} line {i}\n" * 100 for i in range(60)}
    for rel, text in files.items():
        write(ws, rel, text)
    age_tree(ws)
    store.checkpoint(dirty=set(files), label=tag)
    assert store.fold_held() is True


def test_a_read_across_two_folds_in_a_row_finds_its_object(ws: Path) -> None:
    """A reader of another process (no lock: a CLI ``show``, a rewind's read) placed an
    object in a small pack; a fold took that pack into its own and removed it; the reader's
    read misses and lists the packs again, and a second fold (the server's next quiet
    moment) takes the pack it found there before its read. Folds come at every quiet
    moment of every server, not only past ``MERGE_AT`` logs as merges do."""
    root = ws / ".turnback"
    with Store.open(ws, create=True) as server:
        _raw_checkpoint(server, ws)
        cp = server.checkpoints()[-1]
        assert server.fold_held() is True
        entry = server.trees.lookup(cp.tree, "d3/f3.txt")
        assert entry is not None
        blob, text = entry.hash, ("raw line 3\n" * 400).encode()
        with Store.open(ws) as reader:
            assert reader.objects.exists(blob)  # placed in the fold's pack, not yet opened
            first = reader.objects.packs.locate(blob)
            assert first is not None
            _raw_fold(server, ws, "second")
            assert not (root / "objects" / "pack" / f"{first.pack}.pack").exists(), \
                "the second fold did not take the pack: the attack did not run"
            packs = reader.objects.packs
            real = packs.refresh
            moved: list[str] = []

            def refresh(whole: bool = False) -> None:
                real(whole)
                if not moved:  # the reader's look lands between two folds
                    loc = packs.locate(blob)
                    moved.append(loc.pack if loc is not None else "")
                    _raw_fold(server, ws, "third")

            packs.refresh = refresh  # type: ignore[method-assign]
            got = reader.objects.get(BLOB, blob)  # before the fix: NotFound
            packs.refresh = real  # type: ignore[method-assign]
            assert moved and not (root / "objects" / "pack" / f"{moved[0]}.pack").exists(), \
                "the third fold did not take the pack the reader found: the attack did not run"
            assert got == text
    with Store.open(ws) as again:
        assert again.fsck().ok
