"""A write that lands after the rewind looked at a file but before its replacement is kept.

The rewind looks at each file right before replacing it (a save since the safety scan stops
it); a write in between, through a descriptor an editor or a build tool holds open, or by
the file's name, went into the file the rename then replaced, which was unlinked after the
answer: lost. The file the rename replaced is looked at after the rename, by the second
name that keeps it until the answer (``Applier._keep_replaced``); a change found there puts
it back in place, and the rewind stops as for any save while it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs.folders import Folder
from wsutil import journal_left, write

from .seams import changed_since, refuse_put_back


def _rewind_with_a_write_before_the_rename(
        ws: Path, monkeypatch: pytest.MonkeyPatch, late_write: Callable[[], None],
        after_edits: Callable[[], None] = lambda: None) -> Store:
    """Rewind a.txt and z.txt; ``late_write`` runs once z.txt was looked at, right before
    its replacement (when its second name is made); ``after_edits`` before the rewind."""
    store, cp = changed_since(ws)
    after_edits()
    real = rw.Applier._keep_replaced
    fired: list[str] = []

    def before_the_rename(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        if name == "z.txt" and not fired:
            fired.append(name)
            late_write()
        return real(self, dfd, name, *rest)

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)
    with pytest.raises(rw.Changed, match=r"z\.txt") as info:
        store.rewind(cp)
    assert fired == ["z.txt"]
    # rolled back, not recorded: the message keeps the user from an undo of the operation before
    assert "nothing of it to undo" in str(info.value)
    return store


def test_a_write_through_a_descriptor_held_open_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    held: list[int] = []

    def open_it() -> None:  # as an editor or a build tool holds it, once it holds z2
        held.append(os.open(ws / "z.txt", os.O_WRONLY))

    def through_the_descriptor() -> None:
        os.pwrite(held[0], b"z3, written through a descriptor held open\n", 0)

    try:
        store = _rewind_with_a_write_before_the_rename(ws, monkeypatch, through_the_descriptor,
                                                       open_it)
        assert (ws / "z.txt").read_bytes() == b"z3, written through a descriptor held open\n"
        # the descriptor still writes into the file at that name
        os.pwrite(held[0], b"z4", 0)
        assert (ws / "z.txt").read_bytes().startswith(b"z4")
        assert (ws / "a.txt").read_text() == "a2\n"  # the rewind was undone
        assert not journal_left(store.root)
        store.close()
    finally:
        for fd in held:
            os.close(fd)


def test_a_write_by_name_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"

    def by_name() -> None:
        with open(ws / "z.txt", "r+b") as f:  # a tool writing the file in place
            f.write(b"z3, written in place\n")

    store = _rewind_with_a_write_before_the_rename(ws, monkeypatch, by_name)
    assert (ws / "z.txt").read_bytes() == b"z3, written in place\n"
    assert (ws / "a.txt").read_text() == "a2\n"
    assert not journal_left(store.root)
    store.close()


def test_a_file_saved_by_a_rename_over_it_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"

    def atomic_save() -> None:  # an editor's save: a new file renamed over the old
        (ws / "z.txt.swp").write_text("z3, saved by the editor\n")
        os.replace(ws / "z.txt.swp", ws / "z.txt")

    store = _rewind_with_a_write_before_the_rename(ws, monkeypatch, atomic_save)
    assert (ws / "z.txt").read_text() == "z3, saved by the editor\n"
    assert (ws / "a.txt").read_text() == "a2\n"
    assert sorted(p.name for p in ws.iterdir() if p.is_file()) == ["a.txt", "z.txt"]
    store.close()


def test_no_late_write_the_rewind_goes_ahead_and_frees_what_it_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "a1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    store.rewind(cp.id)
    assert (ws / "a.txt").read_text() == "a1\n"
    assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt"]
    store.undo()
    assert (ws / "a.txt").read_text() == "a2\n"
    store.close()


@pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                    reason="no second name where folders are reached by path: nothing to put back")
def test_a_late_write_that_cannot_be_put_back_is_kept_under_a_name_it_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"

    def by_name() -> None:
        refuse_put_back(monkeypatch, ws, "z.txt")
        with open(ws / "z.txt", "r+b") as f:
            f.write(b"z3, written in place\n")

    store, cp = changed_since(ws)
    real = rw.Applier._keep_replaced

    def before_the_rename(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        if name == "z.txt":
            by_name()
        return real(self, dfd, name, *rest)

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)
    with pytest.raises(rw.Unsafe, match=r"z\.txt\.turnback-saved-[0-9a-f]{8}"):
        store.rewind(cp)
    saved = [p for p in ws.iterdir() if p.name.startswith("z.txt.turnback-saved-")]
    assert len(saved) == 1 and saved[0].read_bytes() == b"z3, written in place\n"
    store.close()
