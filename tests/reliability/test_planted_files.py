"""Files planted where Turnback reads: a symlink to ``/dev/zero`` or to a file in ``~``, a FIFO.

The store lives in the workspace and ``.gitignore`` is the workspace's own, so whoever can
write the workspace can plant these. Before ``fs/reading.py``, each of them hung the CLI
(and the server) forever: a FIFO's ``open`` waits for a writer, ``/dev/zero`` never ends;
an appended log that was a symlink wrote Turnback's lines into the file it named. Every
case here must end (the CLI runs under ``run_cli``'s timeout), never change a byte outside
the workspace, and either work or name the planted file.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from turnback import Store
from wsutil import run_cli, write

STORE_FILES = [
    "config.json",
    "journal.json",
    "checkpoints.jsonl",
    "oplog.jsonl",
    "index/summaries.json",
    "SESSION",  # the session's JSONL file
    "PACK_IDX",
    "PACK",
    "LOG",  # the object log (format 3)
    "LOOSE",  # a loose object (a 600 KiB file stays loose)
    "cache/gc-generation",
]
PLANTS = ["zero", "fifo", "outside"]


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, str]]:
    from turnback.objects import packs
    ws = tmp_path / "ws"
    write(ws, "a.txt", "alpha\n")
    write(ws, "big.bin", random.Random(7).randbytes(600 * 1024))  # stays loose
    store = Store.open(ws)
    s = store.start_session(session_id="s1", title="planted")
    store.append(s.id, "prompt", {"text": "go"})
    with monkeypatch.context() as m:
        m.setattr(packs, "LOG_BYTES", 0)  # the first in a pack; the next ones in a log
        first = store.checkpoint(session_id=s.id).id
    write(ws, "a.txt", "beta\n")
    store.checkpoint(session_id=s.id)
    store.rewind(first)
    store.undo()
    store.sessions()
    store.close()
    root = ws / ".turnback"
    (root / "cache").mkdir(exist_ok=True)
    (root / "cache" / "gc-generation").write_text("1")
    names = {
        "SESSION": next(p for p in (root / "sessions").glob("*.jsonl")),
        "PACK_IDX": next(root.rglob("*.idx")),
        "PACK": next(root.rglob("*.pack")),
        "LOG": next(root.rglob("log-*")),
        "LOOSE": next(p for p in (root / "objects").rglob("*")
                      if p.is_file() and "pack" not in p.parts and "log" not in p.parts),
    }
    files = {k: str(v.relative_to(root)) for k, v in names.items()}
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    return ws, outside, files


def _plant(target: Path, how: str, outside: Path) -> None:
    target.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    if how == "zero":
        target.symlink_to("/dev/zero")
    elif how == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(outside)


@pytest.mark.parametrize("how", PLANTS)
@pytest.mark.parametrize("name", STORE_FILES)
def test_a_planted_store_file_never_hangs_nor_writes_outside(
        built: tuple[Path, Path, dict[str, str]], name: str, how: str) -> None:
    ws, outside, files = built
    target = ws / ".turnback" / files.get(name, name)
    _plant(target, how, outside)
    write(ws, "a.txt", "gamma\n")
    for args in (["status"], ["sessions"], ["checkpoint", "-m", "after"], ["fsck"]):
        proc = run_cli(ws, *args, check=None)  # a hang fails here (run_cli's timeout)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            assert "Traceback" not in err, err
    assert outside.read_text() == "keep\n"
    assert Path("/dev/null").is_char_device()


@pytest.mark.parametrize("how", ["zero", "fifo"])
def test_a_planted_gitignore_is_not_read(tmp_path: Path, how: str) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "alpha\n")
    sub = ws / "sub"
    write(sub, "b.txt", "b\n")
    _plant(sub / ".gitignore", how, tmp_path / "none")
    run_cli(ws, "checkpoint", "-m", "one")
    store = Store.open(ws)
    try:
        head = store.checkpoints()[-1]
        assert store.read_file(head.id, "sub/b.txt") == b"b\n"  # the link/FIFO ignored nothing
    finally:
        store.close()


def test_a_symlinked_gitignore_is_not_followed(tmp_path: Path) -> None:
    """As git (2.32+): an in-tree ``.gitignore`` that is a symlink is not read."""
    ws = tmp_path / "ws"
    write(ws, "a.txt", "alpha\n")
    write(tmp_path, "rules", "a.txt\n")
    (ws / ".gitignore").symlink_to(tmp_path / "rules")
    run_cli(ws, "checkpoint", "-m", "one")
    store = Store.open(ws)
    try:
        assert store.read_file(store.checkpoints()[-1].id, "a.txt") == b"alpha\n"
    finally:
        store.close()
