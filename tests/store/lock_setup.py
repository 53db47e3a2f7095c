"""The set-up of the tests that plant something at a lock file's name
(``test_lock_is_a_folder.py``, ``test_lock_is_a_socket.py``): the lock files a checkpoint
opens, and the store they are planted in."""

from __future__ import annotations

from pathlib import Path

from turnback import Store

# the lock files a checkpoint opens, below the store's root
LOCKS = ["checkpoints.jsonl.lock", "locks/gc", "sessions/workspace.jsonl.lock"]


def store_with_a_checkpoint(tmp_path: Path, named: bool) -> tuple[Path, dict[str, Path]]:
    """``tmp_path/ws`` holding ``f.txt`` ("one") and one checkpoint, "first": in its own
    store, or with ``named`` in ``tmp_path/store`` (the second value: what ``Store.open``
    is given to open it again)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    where = {"store_dir": tmp_path / "store"} if named else {}
    with Store.open(ws, **where) as store:
        store.checkpoint(label="first")
    return ws, where
