"""An incremental scan (the watcher's dirty paths) builds exactly the tree a full scan builds."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.osflags import DESCRIPTORS
from turnback.objects.objectstore import BLOB, hash_bytes
from turnback.snapshot import hashing, scan
from turnback.snapshot.hashing import INLINE_MAX


def _edit(ws: Path, rng: random.Random, files: list[str]) -> set[str]:
    """One random edit; returns the paths a file watcher would report."""
    op = rng.choice(["modify", "create", "delete", "chmod", "mkdir", "rmdir", "link", "ignored"])
    if op == "modify" and files:
        p = rng.choice(files)
        (ws / p).write_bytes(rng.randbytes(rng.randint(0, 64)))
        return {p}
    if op == "create":
        p = f"d{rng.randint(0, 3)}/n{rng.randint(0, 50)}.txt"
        (ws / p).parent.mkdir(parents=True, exist_ok=True)
        (ws / p).write_text(f"new {rng.random()}")
        return {p}
    if op == "delete" and files:
        p = rng.choice(files)
        (ws / p).unlink()
        return {p}
    if op == "chmod" and files:
        p = rng.choice(files)
        os.chmod(ws / p, 0o755 if rng.random() < 0.5 else 0o644)
        return {p}
    if op == "mkdir":
        d = f"d{rng.randint(0, 3)}/sub{rng.randint(0, 3)}"
        (ws / d).mkdir(parents=True, exist_ok=True)
        (ws / d / "inner.txt").write_text("inner")
        return {d}  # watchers often report only the new folder
    if op == "rmdir":
        d = ws / f"d{rng.randint(0, 3)}"
        if d.is_dir():
            for root, dirs, fs in os.walk(d, topdown=False):
                for f in fs:
                    os.unlink(os.path.join(root, f))
                for x in dirs:
                    p = os.path.join(root, x)
                    os.unlink(p) if os.path.islink(p) else os.rmdir(p)
            d.rmdir()
            return {d.relative_to(ws).as_posix()}
    if op == "link":
        p = f"d{rng.randint(0, 3)}/ln{rng.randint(0, 3)}"
        (ws / p).parent.mkdir(parents=True, exist_ok=True)
        if (ws / p).is_symlink():
            (ws / p).unlink()
        os.symlink(f"target-{rng.randint(0, 9)}", ws / p)
        return {p}
    if op == "ignored":
        (ws / "build").mkdir(exist_ok=True)
        (ws / "build" / "out.o").write_bytes(rng.randbytes(8))
        return {"build/out.o"}
    return set()


# edits come from the seed alone, so a failing seed replays; TURNBACK_INCREMENTAL_SEEDS=N runs more
@pytest.mark.parametrize("seed", range(int(os.environ.get("TURNBACK_INCREMENTAL_SEEDS", "12"))))
def test_incremental_equals_full(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("build/\n")
    for i in range(30):
        p = ws / f"d{i % 4}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"file {i}")
    store = Store.open(ws)
    store.checkpoint(dirty=set())  # no base yet: a full scan that becomes the base
    for _ in range(12):
        dirty: set[str] = set()
        for _ in range(rng.randint(1, 4)):
            files = [p.relative_to(ws).as_posix() for p in sorted(ws.rglob("*"))
                     if p.is_file() and not p.is_symlink() and ".turnback" not in p.parts]
            dirty |= _edit(ws, rng, files)
        inc = store.checkpoint(dirty=dirty)
        full = Store.open(ws).scanner.scan(write=False)
        assert inc.tree == full.tree, f"dirty {sorted(dirty)}"
        assert (inc.files, inc.bytes) == (full.files, full.bytes)
        noop = store.checkpoint(dirty=set())  # nothing changed since: no scan at all
        assert (noop.tree, noop.files, noop.bytes) == (inc.tree, inc.files, inc.bytes)


def test_a_changed_file_is_looked_at_once_and_its_row_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental checkpoint reads a changed file with the ``lstat`` it took to find
    it (one, not one more before the read), and that stat makes its stat cache row: the
    next full scan, in a fresh process, reads nothing."""
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    for i in range(3):
        f = ws / "a" / "b" / f"f{i}.txt"
        f.write_text(f"file {i}")
        past = f.stat().st_mtime_ns - 10_000_000_000  # not racy: its row is trusted
        os.utime(f, ns=(past, past))
    store = Store.open(ws)
    store.checkpoint()
    changed = ws / "a" / "b" / "f1.txt"
    changed.write_text("changed, and longer than before")
    past = changed.stat().st_mtime_ns - 10_000_000_000  # not racy: its row is trusted
    os.utime(changed, ns=(past, past))
    looked: list[str] = []
    real = os.lstat

    def lstat(path: str | os.PathLike[str], *args: object, **kwargs: object) -> os.stat_result:
        looked.append(os.fspath(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", lstat)
    cp = store.checkpoint(dirty={"a/b/f1.txt"})
    monkeypatch.undo()
    # folders reached by path (TURNBACK_FS_PATHS=1, Windows) have no O_NOFOLLOW: the
    # open itself looks first (fs/reading.open_path_nofollow), so one look more there
    assert looked.count(str(changed)) == (1 if DESCRIPTORS else 2), looked
    store.close()
    again = Store.open(ws)
    res = again.scanner.scan()
    assert res.tree == cp.tree
    assert res.read == 0
    again.close()


@pytest.mark.parametrize("changed", [10, INLINE_MAX + 6])
def test_only_a_few_changed_files_keep_their_stat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: int) -> None:
    """A stat kept until the read is 0.6 KB: an incremental scan keeps one for each of a few
    changed files only (``INLINE_MAX`` dirty paths), the others are looked at again when
    read, and both build the tree a full scan builds."""
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    for i in range(changed):
        (ws / "d" / f"f{i}.txt").write_text(f"file {i}")
    store = Store.open(ws)
    store.checkpoint()
    for i in range(changed):
        (ws / "d" / f"f{i}.txt").write_text(f"changed {i}")
    made: list[str] = []

    class Counted(scan.Looked):
        def __init__(self, rel: str, size: int, st: os.stat_result) -> None:
            made.append(rel)
            super().__init__(rel, size, st)

    monkeypatch.setattr(scan, "Looked", Counted)
    cp = store.checkpoint(dirty={f"d/f{i}.txt" for i in range(changed)})
    assert len(made) == (changed if changed <= INLINE_MAX else 0)
    assert cp.tree == Store.open(ws).scanner.scan(write=False).tree
    store.close()


def test_a_file_made_huge_between_the_look_and_the_read_is_stored_as_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed file an incremental scan looked at small and that is then made huge (here
    a sparse 64 MB; 100 GB costs the same system call) before it is read: stored at the
    size seen, not read into memory to its new end, and the next checkpoint finds it over
    the size cap (its row, the earlier stat, does not hide the change)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "log.txt").write_text("first")
    store = Store.open(ws)
    store.config.size_cap_bytes = 1 << 20
    store.scanner.size_cap = 1 << 20
    store.checkpoint()
    (ws / "log.txt").write_text("second")
    real = store.objects.put_file

    def grown_first(path: Path | str, size: int) -> str:
        os.truncate(path, 64 << 20)  # between the scan's lstat and the read
        return real(path, size)

    monkeypatch.setattr(store.objects, "put_file", grown_first)
    cp = store.checkpoint(dirty={"log.txt"})
    monkeypatch.undo()
    assert store.read_file(cp.id, "log.txt") == b"second"
    nxt = store.checkpoint(dirty={"log.txt"})
    assert [s["path"] for s in nxt.skipped] == ["log.txt"]
    store.close()


@pytest.mark.parametrize("race", ["written before the read", "replaced before the read",
                                  "written after the read", "replaced after the read"])
def test_a_change_around_the_read_is_not_hidden_by_the_looked_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, race: str) -> None:
    """The row of a file an incremental scan looked at is made from that earlier ``lstat``,
    the content from a later read. A write or a replacement by another inode (same size,
    the mtime set back to the one looked at, as anyone writing the workspace can) between
    the look and the read, or just after the read, is never hidden: the next full scan, in
    a fresh process, finds the file's last content (ctime and inode are in the row)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_text("aaaa")
    store = Store.open(ws)
    store.checkpoint()
    f.write_text("bbbb")
    past = f.stat().st_mtime_ns - 10_000_000_000  # not racy: its row would be trusted
    os.utime(f, ns=(past, past))
    real = store.objects.put_file

    def change() -> None:
        if race.startswith("written"):
            f.write_text("cccc")
        else:
            (ws / "new").write_text("cccc")
            os.replace(ws / "new", f)
        os.utime(f, ns=(past, past))

    def racing(path: Path | str, size: int) -> str:
        if race.endswith("before the read"):
            change()
            return real(path, size)
        got = real(path, size)
        change()
        return got

    monkeypatch.setattr(store.objects, "put_file", racing)
    store.checkpoint(dirty={"f.txt"})
    monkeypatch.undo()
    store.close()
    again = Store.open(ws)
    cp = again.checkpoint()
    assert again.read_file(cp.id, "f.txt") == b"cccc"
    again.close()


def test_a_file_only_hashed_is_hashed_as_far_as_the_size_seen(tmp_path: Path) -> None:
    """A scan that stores nothing (``write=False``) hashes a file as a checkpoint stores it:
    up to the size its look saw, not a sparse 64 MB grown since (a hash that differed from
    the stored one, and a read with no bound)."""
    f = tmp_path / "f.txt"
    f.write_bytes(b"0123456789")
    os.truncate(f, 64 << 20)
    assert hashing._hash_file_only(str(f), 10) == hash_bytes(BLOB, b"0123456789")
