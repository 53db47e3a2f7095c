"""A rewind of a few overwritten files syncs them by the descriptors it wrote them through
(``Applier(hold=True)``), together, instead of the whole file system: what it holds is
synced and let go whichever way the rewind ends, and a failed sync falls back to
``syncfs``. Every other rewind (files made or removed, many files) syncs the file system."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.osflags import DESCRIPTORS
from turnback.rewind import apply
from turnback.store import rewind_ops
from wsutil import write

pytestmark = pytest.mark.skipif(not DESCRIPTORS or not sys.platform.startswith("linux"),
                                reason="descriptors, and /proc to count them")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What each rewind synced: ``held`` (its files), ``syncfs`` (the file system)."""
    seen: list[str] = []
    real_sync = apply.Applier.sync

    def held(self: apply.Applier) -> bool:
        seen.append("held")
        return real_sync(self)

    monkeypatch.setattr(apply.Applier, "sync", held)
    monkeypatch.setattr(rewind_ops, "syncfs", lambda path: seen.append("syncfs") or True)
    return seen


def test_a_few_overwritten_files_are_synced_by_descriptor(store: Store, ws: Path,
                                                          syncs: list[str]) -> None:
    for i in range(3):
        write(ws, f"d{i}/f", "v1")
    cp = store.checkpoint()
    for i in range(3):
        write(ws, f"d{i}/f", "v2")
    before = _open_fds()
    res = store.rewind(cp.id)
    assert sorted(res.written) == ["d0/f", "d1/f", "d2/f"]
    assert all((ws / f"d{i}/f").read_text() == "v1" for i in range(3))
    assert syncs == ["held"] and _open_fds() == before, "synced once, nothing left open"


def test_answered_first_then_synced_when_finished(store: Store, ws: Path,
                                                  syncs: list[str]) -> None:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    before = _open_fds()
    store.rewind(cp.id, finish_later=True)
    assert syncs == [] and store.oplog.pending() is not None
    store.finish_rewind()
    assert syncs == ["held"] and store.oplog.pending() is None and _open_fds() == before


def test_files_made_or_removed_sync_the_file_system(store: Store, ws: Path,
                                                    syncs: list[str]) -> None:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")
    write(ws, "new/g", "made after the checkpoint")
    before = _open_fds()
    store.rewind(cp.id)
    assert not (ws / "new").exists() and (ws / "f").read_text() == "v1"
    assert syncs == ["syncfs"] and _open_fds() == before


def test_a_failed_sync_falls_back_to_the_file_system(store: Store, ws: Path, syncs: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "f", "v1")
    cp = store.checkpoint()
    write(ws, "f", "v2")

    def failing(jobs: object) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(apply, "run_together", failing)
    before = _open_fds()
    store.rewind(cp.id)
    assert syncs == ["held", "syncfs"] and _open_fds() == before
    assert (ws / "f").read_text() == "v1" and store.oplog.pending() is None


def test_a_refused_rewind_lets_go_of_what_it_wrote(store: Store, ws: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "a", "v1")
    write(ws, "b", "v1")
    cp = store.checkpoint()
    write(ws, "a", "v2")
    write(ws, "b", "v2")
    real_put = apply.Applier._put

    def put_then_fail(self: apply.Applier, root: object, path: str, entry: object) -> None:
        if path == "b":
            raise OSError(28, "No space left on device")
        real_put(self, root, path, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(apply.Applier, "_put", put_then_fail)
    before = _open_fds()
    with pytest.raises(OSError):
        store.rewind(cp.id)
    assert _open_fds() == before
    assert (ws / "a").read_text() == "v2", "rolled back"
