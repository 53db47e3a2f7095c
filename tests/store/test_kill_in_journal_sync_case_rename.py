"""A rewind whose plan renames a file by case only (removes ``README.md``, makes
``readme.md``), killed in its journal's sync, before any file: nothing was changed, so
the next open applies nothing (trust37's rule). On a case-insensitive file system
(``scripts/test-portable.sh``) the made name finds the removed file: the recovery's look
(``untouched``) took it for the rewind's write (same bytes: since trust37) or for a path
changed since the safety checkpoint (other bytes: since redteam51's first fix) and
applied the rewind. The removed file's other spelling is no sign now."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.rewind import oplog


def _die(*_a: Any, **_kw: Any) -> None:
    os._exit(0)


@pytest.mark.parametrize("bytes_", ["same", "other"])
def test_a_case_rename_killed_before_any_file_is_not_applied(ws: Path, bytes_: str) -> None:
    (ws / "readme.md").write_text("one")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
    (ws / "readme.md").unlink()
    (ws / "README.md").write_text("one" if bytes_ == "same" else "two")
    pid = os.fork()
    if pid == 0:  # the child: nothing here returns
        try:
            store = Store.open(ws)
            store.config.fsync = "commit"  # the journal's sync is made
            first = next(c for c in store.checkpoints() if c.label == "first")
            oplog.fsync_all = _die  # type: ignore[assignment]
            store.rewind(first.id)
        finally:
            os._exit(3)  # never killed: the test fails below
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with Store.open(ws) as store:
        assert store.oplog.pending() is None
        assert store.oplog.all() == []  # nothing applied nor recorded
    assert sorted(os.listdir(ws)) == [".turnback", "README.md"]  # the spelling kept
    assert (ws / "README.md").read_text() == ("one" if bytes_ == "same" else "two")
