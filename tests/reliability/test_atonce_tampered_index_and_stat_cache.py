"""Red-team pass over the at-once checkpoint (atonce16c): attacks that hold, kept as
tests. A pack index whose rows were tampered with never yields a wrong object nor a crash
(the two-byte narrowing only narrows; every read is checked against its name); the stat
cache saved after the answer never makes a later checkpoint miss an edit, whatever
happens between the answer and the save."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import NotFound, StoreDamaged
from turnback.objects.objectstore import ObjectStore
from turnback.objects.packs import _ENTRY, _IDX_START, SORTED_MIN

BLOB = b"blob"

@pytest.fixture(autouse=True)
def _packs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These attacks are on packs and their indexes: every batch writes one (a small one
    would go to the object log, tested in tests/store/test_object_log.py)."""
    from turnback.objects import packs
    monkeypatch.setattr(packs, "LOG_BYTES", 0)



def _packed(root: Path, count: int) -> tuple[dict[str, bytes], Path]:
    """``count`` small objects in one pack; their contents by name, and the pack index."""
    objects = ObjectStore(root / "objects")
    stored = {}
    with objects.batch(fsync=False):
        for i in range(count):
            data = f"object {i}\n".encode()
            stored[objects.put(BLOB, data)] = data
    (idx,) = (root / "objects" / "pack").glob("*.idx")
    return stored, idx


def _rows(idx: Path) -> tuple[bytes, list[bytes]]:
    data = idx.read_bytes()
    size = _ENTRY.size
    return data[:_IDX_START], [data[i: i + size] for i in range(_IDX_START, len(data), size)]


def _each_read(root: Path, stored: dict[str, bytes]) -> dict[str, str]:
    """Every object read by a fresh store: what came back is the object or an error."""
    objects = ObjectStore(root / "objects")
    outcome = {}
    for name, data in stored.items():
        try:
            got = objects.get(BLOB, name)
        except (NotFound, StoreDamaged) as exc:
            outcome[name] = type(exc).__name__
            continue
        assert got == data, f"{name[:12]}: a wrong object came back"
        outcome[name] = "ok"
    return outcome


@pytest.mark.parametrize("count", [40, SORTED_MIN + 10])  # the dict, the bisected bytes
def test_unsorted_rows_never_give_a_wrong_object(tmp_path: Path, count: int) -> None:
    stored, idx = _packed(tmp_path, count)
    head, rows = _rows(idx)
    idx.write_bytes(head + b"".join(reversed(rows)))
    outcome = _each_read(tmp_path, stored)
    assert "ok" in outcome.values()  # the dict still finds them; bisection finds some
    # what a look-up misses is stored again, and read back right
    objects = ObjectStore(tmp_path / "objects")
    with objects.batch(fsync=False, refresh=False):
        for name, data in stored.items():
            assert objects.put(BLOB, data) == name
    assert _each_read(tmp_path, stored) == dict.fromkeys(stored, "ok")


@pytest.mark.parametrize("count", [40, SORTED_MIN + 10])
def test_swapped_places_are_caught_by_the_check_on_read(tmp_path: Path, count: int) -> None:
    """Each row keeps its name but takes the next row's place in the pack."""
    stored, idx = _packed(tmp_path, count)
    head, rows = _rows(idx)
    moved = [r[:32] + rows[(i + 1) % len(rows)][32:] for i, r in enumerate(rows)]
    idx.write_bytes(head + b"".join(moved))
    outcome = _each_read(tmp_path, stored)
    assert set(outcome.values()) == {"StoreDamaged"}


@pytest.mark.parametrize("count", [40, SORTED_MIN + 10])
def test_duplicated_rows_cost_only_the_rows_they_replaced(tmp_path: Path, count: int) -> None:
    stored, idx = _packed(tmp_path, count)
    head, rows = _rows(idx)
    doubled = [rows[i - 1] if i % 2 else r for i, r in enumerate(rows)]
    idx.write_bytes(head + b"".join(doubled))
    outcome = _each_read(tmp_path, stored)
    assert list(outcome.values()).count("ok") == (len(rows) + 1) // 2
    assert set(outcome.values()) == {"ok", "NotFound"}


def test_a_truncated_index_is_reported_not_read(tmp_path: Path) -> None:
    stored, idx = _packed(tmp_path, SORTED_MIN + 10)
    idx.write_bytes(idx.read_bytes()[:-7])
    objects = ObjectStore(tmp_path / "objects")
    assert set(_each_read(tmp_path, stored).values()) == {"NotFound"}
    objects.packs.refresh()
    assert objects.packs.damaged  # fsck names it


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for i in range(6):
        _dated(ws / f"d{i % 2}" / f"f{i}.txt", f"file {i}\n")
    return ws


def _dated(path: Path, text: str) -> None:
    """Written and dated a minute back, past the scan's racy margin: only the stat cache's
    own checks (size, times, inode) can then tell the file changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


def _fresh_tree(ws: Path) -> str:
    with Store.open(ws) as fresh:
        return fresh.checkpoint().tree


def test_an_edit_between_the_answer_and_the_save_is_not_missed(tmp_path: Path) -> None:
    """The file changes (same size, dated back) after the checkpoint answered and before
    its cache is saved: the saved rows hold the stat the scan saw, not the new file's."""
    ws = _workspace(tmp_path)
    f = ws / "d0" / "f0.txt"
    with Store.open(ws) as store:
        store.checkpoint()
        _dated(f, "edit A\n")
        store.checkpoint(dirty={"d0/f0.txt"}, save_later=True)
        _dated(f, "edit B\n")  # between the answer and the save
        store.save_scan_cache()
    with Store.open(ws) as fresh:
        cp = fresh.checkpoint()
        assert fresh.read_file(cp.id, "d0/f0.txt") == b"edit B\n"


def test_another_process_between_the_answer_and_the_save(tmp_path: Path) -> None:
    """A CLI checkpoint, then a gc, from other processes between the answer and the save:
    the older cache written over theirs only costs reads; every later checkpoint is the
    workspace as it is."""
    ws = _workspace(tmp_path)
    f = ws / "d1" / "f1.txt"
    with Store.open(ws) as store:
        store.checkpoint()
        _dated(f, "server's\n")
        store.checkpoint(dirty={"d1/f1.txt"}, save_later=True)
        _dated(f, "cli's\n")
        with Store.open(ws) as cli:
            cli.checkpoint()
            _dated(f, "server's\n")
            cli.checkpoint()
            cli.gc(keep_last=1)  # "cli's" blob is garbage now
        store.save_scan_cache()
        _dated(f, "cli's\n")  # the removed content, back
        cp = store.checkpoint(dirty={"d1/f1.txt"})
        assert store.read_file(cp.id, "d1/f1.txt") == b"cli's\n"
    assert _fresh_tree(ws) == cp.tree
    with Store.open(ws) as fresh:
        assert fresh.fsck().ok


def test_a_rewind_elsewhere_between_the_answer_and_the_save(tmp_path: Path) -> None:
    """A CLI rewind replaces the file the unsaved cache has a row for: the row no longer
    matches the file (new inode and times), so the save cannot make it look unchanged."""
    ws = _workspace(tmp_path)
    f = ws / "d0" / "f2.txt"
    with Store.open(ws) as store:
        first = store.checkpoint()
        _dated(f, "file X\n")  # the same size as what the rewind brings back
        store.checkpoint(dirty={"d0/f2.txt"}, save_later=True)
        with Store.open(ws) as cli:
            cli.rewind(first.id)
        store.save_scan_cache()
        cp = store.checkpoint()
        assert store.read_file(cp.id, "d0/f2.txt") == b"file 2\n"
    assert _fresh_tree(ws) == cp.tree == first.tree


def test_an_edit_before_a_rewind_finished_later_is_recorded(tmp_path: Path) -> None:
    """``rewind(finish_later=True)`` keeps the safety scan's cache for ``finish_rewind``:
    an edit after the answer and before it is seen by the next checkpoint."""
    ws = _workspace(tmp_path)
    f = ws / "d1" / "f3.txt"
    with Store.open(ws) as store:
        first = store.checkpoint()
        _dated(f, "file Y\n")
        store.checkpoint(dirty={"d1/f3.txt"})
        store.rewind(first.id, finish_later=True)
        _dated(f, "file Z\n")  # between the answer and finish_rewind
        store.finish_rewind()
    with Store.open(ws) as fresh:
        cp = fresh.checkpoint()
        assert fresh.read_file(cp.id, "d1/f3.txt") == b"file Z\n"


def test_an_object_stored_twice_keeps_fsck_and_gc_right(tmp_path: Path) -> None:
    """Another process stores a blob in a pack this long-lived store does not list (no gc
    since its last listing); this one stores it again in its own pack. Both packs hold it:
    reads, fsck and gc (which merges the packs) stay right."""
    ws = _workspace(tmp_path)
    f = ws / "d0" / "f4.txt"
    packs = ws / ".turnback" / "objects" / "pack"
    with Store.open(ws) as store:
        store.checkpoint()
        _dated(f, "stored twice\n")
        with Store.open(ws) as cli:
            cli.checkpoint()
        count = len(list(packs.glob("*.pack")))
        cp = store.checkpoint(dirty={"d0/f4.txt"})
        assert len(list(packs.glob("*.pack"))) == count + 1  # its own copy, in a new pack
        assert store.fsck().ok
        store.gc()
        assert store.read_file(cp.id, "d0/f4.txt") == b"stored twice\n"
    with Store.open(ws) as fresh:
        assert fresh.fsck().ok
        assert fresh.read_file(cp.id, "d0/f4.txt") == b"stored twice\n"
