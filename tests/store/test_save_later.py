"""Store.checkpoint(save_later=True): the stat cache saved after the answer, by
``save_scan_cache`` or by whatever the store does next."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.objects.objectstore import ObjectStore


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for i in range(12):
        p = ws / f"d{i % 3}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        _write(p, f"file {i}\n")
    return ws


def _write(path: Path, text: str) -> None:
    """Write, dated a minute back: a file changed within the scan's racy margin is read
    again whatever the cache says (``statcache.RACY_MARGIN_NS``)."""
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the store reads (``ObjectStore.put_file``), by path."""
    seen: list[str] = []
    put_file = ObjectStore.put_file

    def counted(self: ObjectStore, path: Path | str, size: int) -> str:
        seen.append(Path(path).name)
        return put_file(self, path, size)

    monkeypatch.setattr(ObjectStore, "put_file", counted)
    return seen


def test_the_cache_left_unsaved_is_saved_by_close(tmp_path: Path, reads: list[str]) -> None:
    ws = _workspace(tmp_path)
    with Store.open(ws) as store:
        store.checkpoint(save_later=True)
    reads.clear()
    with Store.open(ws) as store:  # a new process: only the saved cache tells it anything
        store.checkpoint()
    assert reads == [], "a file was read again: the cache left unsaved was never saved"


def test_save_scan_cache_saves_it(tmp_path: Path, reads: list[str]) -> None:
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    store.checkpoint(save_later=True)
    store.save_scan_cache()
    reads.clear()
    with Store.open(ws) as other:  # the first one is still open, never closed
        other.checkpoint()
    assert reads == []
    store.close()


def test_the_next_checkpoint_builds_on_the_unsaved_scan(tmp_path: Path, reads: list[str]
                                                        ) -> None:
    """A second incremental checkpoint with the first one's cache unsaved: the same
    tree as a fresh walk, and only the changed file read."""
    ws = _workspace(tmp_path)
    with Store.open(ws) as store:
        store.checkpoint()
        _write(ws / "d0" / "f0.txt", "one\n")
        store.checkpoint(dirty={"d0/f0.txt"}, save_later=True)
        _write(ws / "d1" / "f1.txt", "two\n")
        reads.clear()
        cp = store.checkpoint(dirty={"d1/f1.txt"}, save_later=True)
        assert reads == ["f1.txt"]
        assert store.read_file(cp.id, "d0/f0.txt") == b"one\n"
    reads.clear()
    with Store.open(ws) as fresh:
        assert fresh.checkpoint().tree == cp.tree
    assert reads == []


def test_a_checkpoint_whose_cache_was_never_saved_is_whole(tmp_path: Path) -> None:
    """A process that ends before the save (killed after answering): the checkpoint is
    committed; the next process reads the changed file again and finds the same tree."""
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    store.checkpoint()
    _write(ws / "d2" / "f2.txt", "changed\n")
    cp = store.checkpoint(dirty={"d2/f2.txt"}, save_later=True)
    # not closed: as if killed here
    with Store.open(ws) as next_process:
        assert [c.id for c in next_process.checkpoints()][-1] == cp.id
        assert next_process.read_file(cp.id, "d2/f2.txt") == b"changed\n"
        assert next_process.checkpoint().tree == cp.tree
    store._cache_unsaved = False  # the killed process never saves
    store.close()


def test_a_diff_against_the_working_tree_saves_it_first(tmp_path: Path, reads: list[str]
                                                        ) -> None:
    """A read scan (changes to now) starts the cache's next state: the unsaved one is
    saved before it, not lost."""
    ws = _workspace(tmp_path)
    store = Store.open(ws)
    first = store.checkpoint(save_later=True)
    assert store.changes(first.id) == []
    reads.clear()
    with Store.open(ws) as other:
        other.checkpoint()
    assert reads == []
    store.close()


def test_a_close_with_nothing_to_save_takes_no_lock(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI closes its store before it prints and again after: with the stat cache
    saved by the checkpoint and no batch held there is nothing to write, and no gc lock
    is taken (it was, at every close: three a fresh checkpoint, one before its answer;
    cold25). A cache left unsaved is still saved under it (the test above)."""
    from turnback.store import facade

    taken: list[Path] = []
    rw_lock = facade.rw_lock

    def counted(path: Path, exclusive: bool) -> object:
        taken.append(path)
        return rw_lock(path, exclusive=exclusive)

    monkeypatch.setattr(facade, "rw_lock", counted)
    store = Store.open(_workspace(tmp_path))
    store.checkpoint()
    store.checkpoint()  # a no-op
    store.close()
    store.close()
    assert taken == []
    with Store.open(tmp_path / "ws") as again:
        assert again.checkpoint().files == 12  # nothing lost
