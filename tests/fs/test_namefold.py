"""How names compare (``fs/namefold.py``): the probe on emulated macOS and Windows file
systems (pyfakefs: case-insensitive, case-preserving), the key, and the collisions a
rewind refuses. The real case-insensitive file system: tests/reliability/
test_case_insensitive_fs.py (FUSE)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import OSType
from pyfakefs.fake_filesystem_unittest import Patcher

from turnback.fs.namefold import EXACT, NameRules, collisions, probe

CI = NameRules(case_insensitive=True)
MAC = NameRules(case_insensitive=True, normalizing=True)


@pytest.mark.parametrize(("os_type", "expected"), [
    (OSType.MACOS, NameRules(True, False)),  # pyfakefs folds case, not normalization
    (OSType.WINDOWS, NameRules(True, False)),
    (OSType.LINUX, NameRules(False, False)),
])
def test_the_probe_on_emulated_file_systems(os_type: OSType, expected: NameRules) -> None:
    with Patcher() as patcher:
        patcher.fs.os = os_type
        folder = "C:\\ws" if os_type == OSType.WINDOWS else "/ws"
        patcher.fs.create_dir(folder)
        assert probe(Path(folder)) == expected
        assert os.listdir(folder) == []  # nothing left behind


def test_the_probe_of_a_folder_that_takes_no_file_is_unknown(tmp_path: Path) -> None:
    assert probe(tmp_path / "missing") is None


def test_keys() -> None:
    nfd = unicodedata.normalize("NFD", "Caf\u00e9")
    assert EXACT.key("A.txt") == "A.txt"
    assert CI.key("Dir/A.TXT") == "dir/a.txt"
    assert CI.key(nfd) != CI.key("caf\u00e9")
    assert MAC.key(nfd) == MAC.key("caf\u00e9")
    assert CI.key("Stra\u00dfe") != CI.key("STRASSE")  # simple case mapping: ß is not ss
    assert CI.key("\u0130") == "\u0130"  # İ has no one-character lower case: kept


def test_collisions_name_the_top_pair_touched_by_the_plan() -> None:
    result = {"a.txt", "A.txt", "Dir/x", "dir/y", "dir/z", "same.txt"}
    assert collisions(EXACT, result, result) == []
    assert collisions(CI, result, ["a.txt"]) == [["A.txt", "a.txt"]]
    assert collisions(CI, result, ["dir/y", "a.txt"]) == [["A.txt", "a.txt"], ["Dir", "dir"]]
    assert collisions(CI, result, ["same.txt"]) == []  # nothing written clashes
    # below clashing folders every pair clashes too: only the folders are named
    assert collisions(CI, {"D/x", "d/x"}, ["d/x"]) == [["D", "d"]]


def test_a_case_only_rename_is_no_collision() -> None:
    # the plan removes README.md and creates readme.md: the result holds one of them
    assert collisions(MAC, {"readme.md"}, ["readme.md"]) == []
