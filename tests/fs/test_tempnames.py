"""fs/tempnames.py: a temporary name fits the file system whatever the name it is for, so a
file whose name is as long as the file system allows is written like any other (before, its
temporary name was longer than 255 bytes and the write failed with ENAMETOOLONG)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import storeroots
from turnback.fs.atomic import atomic_write
from turnback.fs.folders import open_root
from turnback.fs.replacing import replace_file
from turnback.fs.tempnames import NAME_MAX, TMP_PREFIX, temp_name

# 255 bytes each: ASCII; two-byte characters and one more byte; three-byte characters
LONGEST = ["a" * 255, "é" * 127 + "a", "€" * 85]


def _left(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(TMP_PREFIX)]


def test_a_short_name_is_kept_whole_with_the_pid_and_eight_hex_digits() -> None:
    name = temp_name("index.json")
    assert name.startswith(f"{TMP_PREFIX}index.json.{os.getpid()}.")
    digits = name.rsplit(".", 1)[1]
    assert len(digits) == 8 and set(digits) <= set("0123456789abcdef")
    assert temp_name("index.json") != name  # drawn again each time


@pytest.mark.parametrize("name", LONGEST, ids=["ascii", "two-byte", "three-byte"])
def test_a_longest_names_temporary_name_fits_and_cuts_no_character_in_two(name: str) -> None:
    assert len(name.encode()) == NAME_MAX
    tmp = temp_name(name)
    raw = os.fsencode(tmp)
    assert len(raw) <= NAME_MAX
    raw.decode("utf-8")  # whole characters only: a cut one would not decode
    assert tmp.startswith(TMP_PREFIX + name[:40])  # what it is for, cut at its end
    assert f".{os.getpid()}." in tmp


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="names are bytes on Linux only")
def test_a_name_that_is_no_utf8_gets_a_temporary_name_that_fits() -> None:
    name = os.fsdecode(b"\xff" * 200 + b"a" * 55)  # held with surrogate escapes
    tmp = temp_name(name)
    assert len(os.fsencode(tmp)) <= NAME_MAX and tmp.startswith(TMP_PREFIX)
    short = os.fsdecode(b"\xff.json")
    assert temp_name(short).startswith(TMP_PREFIX + short)  # kept as it is where it fits


@pytest.mark.parametrize("name", LONGEST, ids=["ascii", "two-byte", "three-byte"])
def test_a_file_with_a_longest_name_is_replaced_by_path_in_a_store_and_through_a_folder(
        tmp_path: Path, name: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    atomic_write(outside / name, b"by path")  # no store: by path
    assert (outside / name).read_bytes() == b"by path" and _left(outside) == []
    with open_root(str(outside)) as folder:
        replace_file(folder, name, b"through a folder")
    assert (outside / name).read_bytes() == b"through a folder" and _left(outside) == []
    ws = tmp_path / "ws"
    ws.mkdir()
    with Store.open(ws) as store:
        target = store.root / "cache" / name
        assert storeroots.find(target) is not None  # through the store's held folder
        atomic_write(target, b"in the store")
        atomic_write(target, b"in the store again")
        assert target.read_bytes() == b"in the store again"
        assert _left(store.root / "cache") == []
