"""What a rewind reads at a path (``rewind/apply.disk_entry``, and ``restore_late``'s
look at a second name, ``_file_entry`` after its own ``lstat``) when the regular file an
``lstat`` found is swapped for a FIFO before it is opened: anyone may write the workspace.

Opened, such a FIFO was read as the file's bytes: its data taken from the program meant to
read it, and the path called unreadable. What was opened is looked at itself (``fstat``)
before anything is read: a FIFO is no file, as ``disk_entry`` says of one its ``lstat``
finds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.fs.folders import open_root
from turnback.fs.osflags import DESCRIPTORS
from turnback.rewind import apply as rw

pytestmark = pytest.mark.skipif(not DESCRIPTORS or not hasattr(os, "mkfifo"),
                                reason="FIFOs and folders held by descriptor (POSIX)")


def test_a_fifo_swapped_in_after_the_lstat_is_no_file_and_keeps_its_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f").write_bytes(b"the user's file")
    seen = os.lstat(tmp_path / "f")  # the look before the open: a regular file
    (tmp_path / "f").unlink()
    os.mkfifo(tmp_path / "f")
    # the FIFO's own reader and writer, with data in it that is theirs
    reader = os.open(tmp_path / "f", os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(tmp_path / "f", os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(writer, b"another program's data")
        with open_root(str(tmp_path)) as folder:
            monkeypatch.setattr(type(folder), "lstat", lambda _self, _name: seen)
            got = rw.disk_entry(folder, "f")
        assert got is None
        assert os.read(reader, 100) == b"another program's data"
    finally:
        os.close(writer)
        os.close(reader)
