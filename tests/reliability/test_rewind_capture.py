"""A rewind destroys nothing it did not capture, and undo gives back every byte.

Each case was a way to lose data through rewind + undo: a file the safety checkpoint
could not take (ignored since, over the size cap, unreadable) was overwritten and then
deleted by undo; a file saved while the rewind ran was overwritten; a file a checkpoint
could not read was taken as absent, so rewinding to it deleted the file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Conflict, Store
from turnback.objects.objectstore import ObjectStore
from wsutil import journal_left, picture, run_cli, write

from .crashkit import tally


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    write(d, "a.txt", "a1\n")
    write(d, "build/out.js", "generated 1\n")
    return d


def count(case: str) -> None:
    tally("hostile input").add_case(case, True)


def _refused_and_untouched(store: Store, ws: Path, cp: str, names: list[str]) -> None:
    before = picture(ws)
    n = len(store.checkpoints())
    with pytest.raises(Conflict) as err:
        store.rewind(cp)
    for name in names:
        assert f"'{name}'" in err.value.message
    assert "Nothing was changed" in err.value.message
    assert picture(ws) == before
    assert len(store.checkpoints()) == n  # a refused rewind leaves no checkpoint behind
    assert not journal_left(store.root)


def test_a_file_ignored_since_the_checkpoint_is_not_overwritten(ws: Path) -> None:
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, ".gitignore", "build/\n")
    write(ws, "build/out.js", "generated 2, only copy\n")
    _refused_and_untouched(store, ws, cp.id, ["build/out.js"])
    # the same content as the checkpoint's is no loss: the rewind goes ahead
    write(ws, "build/out.js", "generated 1\n")
    store.rewind(cp.id)
    assert not (ws / ".gitignore").exists()
    count("rewind over a file ignored since")


def test_a_file_over_the_size_cap_is_not_overwritten(ws: Path) -> None:
    store = Store.open(ws, config={"size_cap_bytes": 1000})
    cp = store.checkpoint()
    write(ws, "build/out.js", "x" * 5000)
    _refused_and_untouched(store, ws, cp.id, ["build/out.js"])
    count("rewind over a file now over the size cap")


def test_an_unreadable_file_is_skipped_not_absent(ws: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(ws)
    real = ObjectStore.put_file

    def denied(self: ObjectStore, path: Path | str, size: int) -> str:
        if Path(path).name == "out.js":
            raise PermissionError(13, "Permission denied", str(path))
        return real(self, path, size)

    write(ws, "build/out.js", "generated 2\n")
    monkeypatch.setattr(ObjectStore, "put_file", denied)
    cp = store.checkpoint()  # as root, chmod 000 would not stop the read: stand in for it
    monkeypatch.undo()
    assert {"path": "build/out.js", "reason": "unreadable (Permission denied)"} in cp.skipped
    assert store.trees.lookup(cp.tree, "build/out.js") is None
    write(ws, "build/out.js", "generated 3\n")
    store.checkpoint()
    # rewinding to the checkpoint that could not read it does not delete it
    store.rewind(cp.id)
    assert (ws / "build/out.js").read_text() == "generated 3\n"
    count("rewind to a checkpoint that could not read a file")


def test_a_file_unreadable_now_is_not_overwritten(ws: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "build/out.js", "generated 2\n")
    real_put, real_entry = ObjectStore.put_file, rw.disk_entry

    def denied(self: ObjectStore, path: Path | str, size: int) -> str:
        if Path(path).name == "out.js":
            raise PermissionError(13, "Permission denied", str(path))
        return real_put(self, path, size)

    def unreadable(dfd: int, name: str) -> rw.Entry | None:
        return rw.UNREADABLE if name == "out.js" else real_entry(dfd, name)

    monkeypatch.setattr(ObjectStore, "put_file", denied)
    monkeypatch.setattr(rw, "disk_entry", unreadable)
    _refused_and_untouched(store, ws, cp.id, ["build/out.js"])
    count("rewind over an unreadable file")


def test_a_file_saved_while_the_rewind_runs_is_kept(ws: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "z.txt", "z1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    write(ws, "z.txt", "z2\n")
    real = rw.Applier._put
    saved: list[str] = []

    def editor_saves(self: rw.Applier, root: int, path: str, entry: rw.Entry,
                     *folder: object) -> None:
        real(self, root, path, entry, *folder)
        if not saved:  # right after the first file is written, an editor saves z.txt
            saved.append(path)
            write(ws, "z.txt", "z3, saved by the editor\n")

    monkeypatch.setattr(rw.Applier, "_put", editor_saves)
    with pytest.raises(rw.Changed, match=r"z\.txt"):
        store.rewind(cp.id)
    assert saved == ["a.txt"]
    assert (ws / "z.txt").read_text() == "z3, saved by the editor\n"  # kept
    assert (ws / "a.txt").read_text() == "a2\n"  # the rewind was undone
    assert not journal_left(store.root)
    count("file saved while the rewind runs")


def test_undo_gives_back_every_byte_and_mode(ws: Path) -> None:
    write(ws, "key", "k1")
    (ws / "key").chmod(0o600)
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "key", "k2")
    (ws / "key").chmod(0o640)
    write(ws, "new.txt", "n\n")
    (ws / "a.txt").unlink()
    changed = picture(ws)
    store.rewind(cp.id)
    assert (ws / "key").stat().st_mode & 0o777 == 0o600
    store.undo()
    assert picture(ws) == changed


def test_a_refused_rewind_keeps_latest_where_it_was(ws: Path) -> None:
    """Retrying `latest~1` after a refusal targets the same checkpoint as before."""
    store = Store.open(ws)
    run_cli(ws, "checkpoint", "-m", "one")
    write(ws, "a.txt", "a2\n")
    run_cli(ws, "checkpoint", "-m", "two")
    write(ws, ".gitignore", "build/\n")
    write(ws, "build/out.js", "only copy\n")
    ids = [c.id for c in store.checkpoints()]
    proc = run_cli(ws, "rewind", "latest~1", check=None)
    assert proc.returncode == 1 and b"could not capture" in proc.stderr, proc.stderr
    assert [c.id for c in Store.open(ws).checkpoints()] == ids
    os.unlink(ws / "build/out.js")
    run_cli(ws, "rewind", "latest~1")
    assert (ws / "a.txt").read_text() == "a1\n"
    count("refused rewind leaves no checkpoint")
