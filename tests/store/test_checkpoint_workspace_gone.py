"""A checkpoint in a store kept outside its workspace (``--store``, ``turnback.storePath``),
after the workspace folder was moved or removed, is refused naming the folder: the scan
listed the missing folder as empty, so the checkpoint recorded no files, and a rewind to it
once the folder was back removed every file (redteam21's open item)."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import NotFound


def _store(tmp_path: Path) -> tuple[Path, Store]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("v1")
    (ws / "d").mkdir()
    (ws / "d" / "g").write_text("g")
    return ws, Store.open(ws, store_dir=tmp_path / "store")


@pytest.mark.parametrize("watched", [False, True])
def test_a_checkpoint_after_the_workspace_moved_names_it(tmp_path: Path, watched: bool) -> None:
    """A full walk (the CLI) and an incremental scan of a watcher's paths (the server)."""
    ws, store = _store(tmp_path)
    try:
        first = store.checkpoint()
        ws.rename(tmp_path / "moved")  # a 'mv' of the project while the server runs
        with pytest.raises(NotFound) as refused:
            store.checkpoint(dirty={"f", "d/g"} if watched else None)
        assert str(ws) in refused.value.message and "no checkpoint" in refused.value.message
        assert [c.id for c in store.checkpoints()] == [first.id]
        (tmp_path / "moved").rename(ws)  # back: the next checkpoint holds every file
        again = store.checkpoint()
        assert again.files == 2
    finally:
        store.close()


def test_a_workspace_moved_while_it_is_scanned_is_not_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moved after the first look and before the scan's end: the scan saw a part of it, or
    nothing; the second look finds the folder gone and nothing is recorded."""
    ws, store = _store(tmp_path)
    try:
        first = store.checkpoint()
        real = store.scanner.scan

        def moved_then_scan(*args: object, **kwargs: object) -> object:
            ws.rename(tmp_path / "moved")
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(store.scanner, "scan", moved_then_scan)
        with pytest.raises(NotFound):
            store.checkpoint()
        monkeypatch.undo()
        assert [c.id for c in store.checkpoints()] == [first.id]
    finally:
        store.close()


def test_a_prepare_of_a_gone_workspace_leaves_no_empty_base(tmp_path: Path) -> None:
    """A server reads changed paths ahead (``prepare``) into the next checkpoint's base: of
    a folder gone, the base would be empty, and a checkpoint once the folder was back,
    building on it with no new paths, would record no files."""
    ws, store = _store(tmp_path)
    try:
        store.checkpoint()
        ws.rename(tmp_path / "moved")
        with pytest.raises(NotFound):
            store.prepare({"f", "d/g"})
        (tmp_path / "moved").rename(ws)
        assert store.checkpoint(dirty=set()).files == 2
    finally:
        store.close()
