"""A ``MemoryError`` or ``KeyboardInterrupt`` (any ``BaseException``) raised inside a
rewind's apply still releases it (trust21): the rewind caught only ``TurnbackError`` and
``OSError``, so the replaced files' second names stayed in the user's folders and the held
folder descriptors stayed open for the life of the process. The original exception is
the one raised; no name is unlinked that is not the very file linked; and the journal's
recovery at the next open gives the rewind's target, with no second name left."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.fs.folders import FdFolder
from turnback.rewind import apply as rw
from wsutil import second_names, write

from .test_release_moved_folder import _held_in, keeping  # noqa: F401

FOLDERS = ["a", "b", "c"]


def _open_fds() -> int:
    """This process's descriptors, but for the packs and logs the store keeps open for its
    next reads (``objects/heldfiles.py``: a bounded few, on purpose)."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed since
        folder, name = os.path.split(target)
        held += (os.path.basename(folder), name[:4]) in {("pack", "pack"), ("log", "log-")}
    return len(os.listdir("/proc/self/fd")) - held


def _failing_on(nth: int, real: Callable[..., Any], exc: BaseException) -> Callable[..., Any]:
    """``real``, raising ``exc`` at its ``nth`` call (1-based) instead."""
    calls = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == nth:
            raise exc
        return real(*args, **kwargs)

    return wrapper


def _ready(store: Store, ws: Path) -> str:
    for f in FOLDERS:
        write(ws, f"{f}/f", "v1")
    cp = store.checkpoint()
    for f in FOLDERS:
        write(ws, f"{f}/f", "v2")
    store.checkpoint()
    return cp.id


def _recovered(store: Store, ws: Path) -> None:
    """The next open's recovery finishes the rewind: every file its target, no second
    name left anywhere, the rewind recorded."""
    store.close()
    again = Store.open(ws)
    try:
        assert again.journal_problem is None
        assert [(ws / f / "f").read_text() for f in FOLDERS] == ["v1"] * len(FOLDERS)
        assert second_names(ws) == []
        assert again.oplog.pending() is None, "the journal ended by the recovery"
    finally:
        again.close()


POINTS: list[tuple[str, str, int, BaseException]] = [
    # (what is patched, its attribute, the call that raises, what it raises)
    ("module", "_write_all", 2, MemoryError()),  # writing the second file's bytes
    ("folders", "get", 3, KeyboardInterrupt()),  # the third file's folder looked up
    ("applier", "_hold", 2, MemoryError()),  # the second file replaced, not yet held
    ("applier", "_keep_replaced", 3, SystemExit(3)),  # before the third's second name
]


@pytest.mark.parametrize(("where", "attr", "nth", "exc"), POINTS,
                         ids=[f"{p[1]}-{type(p[3]).__name__}" for p in POINTS])
def test_any_exception_in_apply_releases(store: Store, ws: Path, keeping: None,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch, where: str,
                                         attr: str, nth: int, exc: BaseException) -> None:
    target = _ready(store, ws)
    fds = _open_fds()
    owner: Any = {"module": rw, "folders": rw.WriteFolders}.get(where, rw.Applier)
    real = getattr(owner, attr)
    monkeypatch.setattr(owner, attr, _failing_on(nth, real, exc))
    with pytest.raises(type(exc)) as raised:
        store.rewind(target)
    assert raised.value is exc, "the original exception, not one of the release's"
    monkeypatch.undo()
    assert second_names(ws) == [], "each replaced file's second name unlinked"
    assert _held_in(ws) == 0 and _open_fds() == fds, "no folder descriptor left open"
    assert store.oplog.pending() is not None, "the journal knows the rewind is unfinished"
    _recovered(store, ws)


def test_an_interrupted_look_leaves_its_second_name_to_the_recovery(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Cut short in the look at a replaced file (``_check_replaced``), that file was not
    looked at: its second name may hold a late write, so it is not unlinked in the
    process (the recovery's ``restore_late`` looks at it, then its clean-up removes it);
    the others are; and a file standing at the temporary name since its rename (anyone's)
    is left: unlinked by that name, it was lost."""
    target = _ready(store, ws)
    fds = _open_fds()
    renamed: list[tuple[str, str]] = []
    planted_at: list[Path] = []
    real_rename = FdFolder.rename
    real_check = rw.Applier._check_replaced

    real_swap = rw._swap

    def rename(self: FdFolder, src: str, dst: str) -> None:
        real_rename(self, src, dst)
        renamed.append((self.path, src))

    def swap(dfd: FdFolder, src: str, dst: str) -> bool:  # the rename where it swaps (swap27)
        swapped = real_swap(dfd, src, dst)
        if swapped:  # ``src`` is free again once what came out is found the file kept
            renamed.append((dfd.path, src))
        return swapped

    def check(dfd: rw.Folder, name: str, kept: str, path: str, *rest: Any) -> None:
        if path == "b/f":
            folder, tmp = renamed[-1]
            Path(folder, tmp).write_text("someone else's")  # a name free since the rename
            planted_at.append(Path(folder, tmp))  # the release renames too (moved aside)
            raise MemoryError
        real_check(dfd, name, kept, path, *rest)

    monkeypatch.setattr(FdFolder, "rename", rename)
    monkeypatch.setattr(rw, "_swap", swap)
    monkeypatch.setattr(rw.Applier, "_check_replaced", staticmethod(check))
    with pytest.raises(MemoryError):
        store.rewind(target)
    monkeypatch.undo()
    [planted] = planted_at
    assert planted.read_text() == "someone else's", "not ours: left"
    kept = [p for p in second_names(ws) if p != planted]
    assert [p.parent.name for p in kept] == ["b"], "a/f's released, b/f's kept"
    assert _held_in(ws) == 0 and _open_fds() == fds
    planted.unlink()
    _recovered(store, ws)


def test_an_exception_in_the_recovery_releases(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The same in the journal's recovery at an open (``recover``): a KeyboardInterrupt in
    its apply left its second names and descriptors; the journal stays for the next."""
    target = _ready(store, ws)
    monkeypatch.setattr(rw.Applier, "_hold", _failing_on(2, rw.Applier._hold, MemoryError()))
    with pytest.raises(MemoryError):
        store.rewind(target)  # left half done, its journal pending
    monkeypatch.undo()
    store.close()
    # undone by hand but the first, in place (a sign the rewind began: one that touched
    # no file is not applied, trust37): the recovery has the other two to write again
    (ws / FOLDERS[0] / "f").write_text("v1")
    for f in FOLDERS[1:]:
        (ws / f / "f").write_text("v2")
    fds = _open_fds()
    monkeypatch.setattr(rw.Applier, "_hold", _failing_on(2, rw.Applier._hold,
                                                         KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        Store.open(ws)
    monkeypatch.undo()
    assert second_names(ws) == []
    assert _held_in(ws) == 0, "no folder descriptor of the recovery's left"
    assert _open_fds() == fds, "nor of the open that failed: the store's root, its locks'"
    again = Store.open(ws)
    try:
        assert [(ws / f / "f").read_text() for f in FOLDERS] == ["v1"] * len(FOLDERS)
        assert second_names(ws) == [] and again.oplog.pending() is None
    finally:
        again.close()
