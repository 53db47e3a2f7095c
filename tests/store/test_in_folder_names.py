"""A file opened in a held folder (``reading.open_append(in_folder=)``: a checkpoint's
session file through the held store root since ``trust32``, its record's
``checkpoints.jsonl`` since ``trust31``) refused as a link is named by its folder's path
too: the message said only the bare name ("20261129T...jsonl is a symbolic link"), not
where, where by path it said the whole path.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.reading import NotRegular


def _store(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    return ws, tmp_path / "named-store"


def test_a_session_file_that_is_a_link_is_named_by_its_path(tmp_path: Path) -> None:
    ws, store_dir = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        sid = store.start_session(title="t").id
        path = store.root / "sessions" / f"{sid}.jsonl"
        target = tmp_path / "target.jsonl"
        shutil.copy(path, target)
        path.unlink()
        os.symlink(target, path)
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(NotRegular) as caught:
            store.checkpoint(label="c", session_id=sid)
    assert str(path) in str(caught.value)
    assert len(target.read_bytes().splitlines()) == 1  # nothing written through it


def test_a_record_file_that_is_a_link_is_named_by_its_path(tmp_path: Path) -> None:
    ws, store_dir = _store(tmp_path)
    with Store.open(ws, store_dir=store_dir) as store:
        store.checkpoint(label="first")
        path = store.root / "checkpoints.jsonl"
        target = tmp_path / "target.jsonl"
        shutil.copy(path, target)
        path.unlink()
        os.symlink(target, path)
        before = target.read_bytes()
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(NotRegular) as caught:
            store.checkpoint(label="second")
    assert str(path) in str(caught.value)
    assert target.read_bytes() == before
