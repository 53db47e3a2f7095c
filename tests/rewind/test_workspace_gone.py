"""A rewind in a store kept outside its workspace (``TURNBACK_STORE``), after the workspace
folder was moved or removed, is refused naming the folder (redteam21): the name probe's
``stat`` of the workspace root (``namefold.probe_site``) raised a bare FileNotFoundError,
a traceback for the CLI and an "internal error" for the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import NotFound


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_rewind_after_the_workspace_moved_names_it(tmp_path: Path, dry_run: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("v1")
    store = Store.open(ws, store_dir=tmp_path / "store")
    try:
        cp = store.checkpoint()
        (ws / "f").write_text("v2")
        ws.rename(tmp_path / "moved")  # a 'mv' of the project while the server runs
        with pytest.raises(NotFound) as refused:
            store.rewind(cp.id, dry_run=dry_run)
        assert str(ws) in refused.value.message and "open" in refused.value.message
        assert (tmp_path / "moved" / "f").read_text() == "v2", "nothing written anywhere"
        assert not ws.exists()
        assert store.log() == []
    finally:
        store.close()
