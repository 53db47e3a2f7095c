"""A folder planted at a lock file's name: ``sessions/<id>.jsonl.lock``,
``checkpoints.jsonl.lock`` (opened through the held store root since trust32) or
``locks/gc``. Before, the lock's ``open`` failed with a bare ``IsADirectoryError``
("[Errno 21] Is a directory: …"), by path and through the held root alike, which said
nothing of what to do (redteam41's open item). It is now ``LockIsFolder`` (a
``StoreDamaged``): the full path, "a folder, not a lock file", and to move it out of the
way; once the folder is gone the command works. The checkpoint's record is not made under
the record's or the gc lock; under the session's it stands (the record, then the event, as
for any refused event). The CLI
prints that and exits 1, no traceback; the server's case is tests/server/test_errors.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.locks import LockIsFolder

from .lock_setup import LOCKS, store_with_a_checkpoint


def _plant(at: Path) -> None:
    at.unlink(missing_ok=True)
    at.mkdir()
    (at / "kept").write_text("whatever was put there\n")


@pytest.mark.parametrize("named", [False, True], ids=["own-store", "named-store"])
@pytest.mark.parametrize("lock", LOCKS)
def test_a_folder_at_a_lock_is_named_with_what_to_do(tmp_path: Path, lock: str,
                                                     named: bool) -> None:
    ws, where = store_with_a_checkpoint(tmp_path, named)
    with Store.open(ws, **where) as store:
        root = store.root
        at = root / lock
        _plant(at)
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(LockIsFolder) as got:
            store.checkpoint(label="second")
        text = str(got.value)
        assert text.startswith(f"{at} is a folder, not a lock file"), text
        assert "Move that folder out of the way" in text, text
        assert isinstance(got.value, OSError)  # a best-effort step skips it as before
        assert (at / "kept").read_text() == "whatever was put there\n"
        recorded = [c.label for c in store.checkpoints()]
        assert recorded == (["first", "second"] if lock.startswith("sessions/") else ["first"])
        (at / "kept").unlink()
        at.rmdir()
        (ws / "f.txt").write_text("three\n")
        store.checkpoint(label="third")  # the lock file made again
        assert [c.label for c in store.checkpoints()] == [*recorded, "third"]


def test_the_cli_prints_the_refusal_and_exits_1(tmp_path: Path) -> None:
    ws, _ = store_with_a_checkpoint(tmp_path, False)
    at = ws / ".turnback" / "checkpoints.jsonl.lock"
    _plant(at)
    (ws / "f.txt").write_text("two\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "turnback.cli.main", "-C", str(ws),
                          "checkpoint", "-m", "second"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert f"{at} is a folder, not a lock file" in out.stderr, out.stderr
    assert "Move that folder out of the way" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "Errno" not in out.stderr, out.stderr
