"""The rewind's probes of the file system: the name-rule probe before it writes, made again
only when the workspace's or the store's folder is another one (``RewindOps._confirm_names``:
it made and removed a file at every rewind), and Windows' symlink probe
(``_can_symlink``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import turnback.store.rewind_ops as ops
from turnback import Store
from turnback.fs.namefold import NameRules
from wsutil import write

PATHS = ("d/e/a.txt", "d/e/b.txt", "d/e/c.txt")


def _edited(ws: Path) -> tuple[Store, str]:
    """A store whose checkpoint holds PATHS as v1, the workspace holding v2."""
    for p in PATHS:
        write(ws, p, "v1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    for p in PATHS:
        write(ws, p, "v2\n")
    return store, cp.id


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> list[NameRules | None]:
    """The answers of every name-rule probe a rewind makes, in order."""
    made: list[NameRules | None] = []
    real = ops.probe_store

    def counted(workspace: Path, root: Path) -> NameRules | None:
        made.append(real(workspace, root))
        return made[-1]

    monkeypatch.setattr(ops, "probe_store", counted)
    return made


def test_the_name_probe_is_made_once_while_the_folders_stay(
        tmp_path: Path, probes: list[NameRules | None]) -> None:
    """Two rewinds: one probe (it made and removed a file at every rewind); names set
    from elsewhere between them (a planted ``config.json`` read again) are replaced by
    this process's probe, never used."""
    ws = tmp_path / "ws"
    store, cp = _edited(ws)
    try:
        store.rewind(cp)
        assert len(probes) == 1
        fresh = store.names
        store.names = NameRules(not fresh.case_insensitive, not fresh.normalizing)
        store.undo()
        assert len(probes) == 1
        assert store.names == fresh
    finally:
        store.close()


def test_the_name_probe_is_made_again_for_another_folder(
        tmp_path: Path, probes: list[NameRules | None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The workspace or the store made again, or moved to another file system: its
    identity changes, and the next rewind probes again."""
    ws = tmp_path / "ws"
    store, cp = _edited(ws)
    sites = iter([(1, 1, 1, 1, 1), (1, 1, 1, 1, 1), (1, 1, 1, 1, 2), (1, 1, 1, 1, 2)])
    monkeypatch.setattr(ops, "probe_site", lambda _ws, _root: next(sites))
    try:
        store.rewind(cp)
        store.undo()
        assert len(probes) == 2
    finally:
        store.close()


def test_the_name_probe_is_made_again_once_the_probed_folder_was_emptied_and_filled(
        tmp_path: Path, probes: list[NameRules | None]) -> None:
    """The workspace's root (where the probe is made when the store is on another file
    system) can be made case-folding (``chattr +F``) in place, its inode kept, only while
    empty: emptied and filled again, its ctime moves, and the next rewind probes again
    rather than trust the answer of the folder as it was. A name made and removed there
    stands in for it (this kernel cannot make a case-folding folder)."""
    ws = tmp_path / "ws"
    store, cp = _edited(ws)
    try:
        store.rewind(cp)
        assert len(probes) == 1
        before = ops.probe_site(store.workspace, store.root)
        (ws / "new.txt").write_text("x\n")  # a name made in the root: its ctime moves
        (ws / "new.txt").unlink()
        assert ops.probe_site(store.workspace, store.root) != before
        store.undo()
        assert len(probes) == 2
    finally:
        store.close()


def test_a_leftover_symlink_probe_does_not_refuse_links(tmp_path: Path) -> None:
    """Windows' check that this user may make a symlink (``_can_symlink``) made
    ``cache/symlink-probe-<pid>``; one left by a killed process of the same pid (or
    planted) made the check fail "exists", and a rewind of any link was refused with a
    word about Developer Mode. Called directly: on Linux a rewind never asks."""
    ws = tmp_path / "ws"
    store, _cp = _edited(ws)
    try:
        (store.root / "cache").mkdir(exist_ok=True)
        (store.root / "cache" / f"symlink-probe-{os.getpid()}").write_text("left\n")
        assert store._can_symlink()
        assert not (store.root / "cache" / f"symlink-probe-{os.getpid()}").exists()
    finally:
        store.close()
