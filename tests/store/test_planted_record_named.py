"""Something planted at ``checkpoints.jsonl`` between two checkpoints, as the refusal names it.

Since trust31 the record is opened by its bare name in the held store root
(``open_append(in_folder=)``), and the refusal named what it was given: "checkpoints.jsonl
is a symbolic link", which store it was in left out (a server keeps several open; a
``--store`` store is anywhere). A folder planted there was not refused as the others: the
``open`` itself failed (``EISDIR``) and "[Errno 21] Is a directory" said nothing of what to
do. Both now name the file by its path and say to move it (redteam40).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.reading import NotRegular


def _plant(at: Path, what: str, elsewhere: Path) -> None:
    at.unlink()
    if what == "a folder":
        at.mkdir()
    elif what == "a symbolic link":
        at.symlink_to(elsewhere)
    else:
        os.mkfifo(at)


@pytest.mark.parametrize("what", ["a folder", "a symbolic link", "a FIFO"])
def test_a_planted_record_file_is_named_by_its_path(tmp_path: Path, what: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    elsewhere = tmp_path / "profile"
    elsewhere.write_text("the user's\n")
    root = tmp_path / "store"
    with Store.open(ws, store_dir=root) as store:
        store.checkpoint(label="first")
        record = root / "checkpoints.jsonl"
        _plant(record, what, elsewhere)
        (ws / "f.txt").write_text("two\n")
        with pytest.raises(NotRegular) as got:
            store.checkpoint(label="second")
    text = str(got.value)
    assert f"{record} is {what}, not a regular file" in text
    assert "Move it out of the way" in text
    assert elsewhere.read_text() == "the user's\n"  # nothing written through the link
