"""fs/programs.py: a program found on PATH is never one in the working folder
(tests/sharing/test_git_program.py: the git that Push and Pull History run)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from turnback.fs.programs import find_program

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX executables are planted here")


def _plant(folder: Path, name: str) -> Path:
    planted = folder / name
    planted.write_text("#!/bin/sh\n: > PLANTED\n")
    planted.chmod(planted.stat().st_mode | stat.S_IXUSR)
    return planted


def test_a_relative_entry_is_skipped_and_an_absolute_one_found(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    tool = _plant(tmp_path / "bin", "tool")
    assert find_program("tool", os.pathsep.join(["bin", str(tmp_path / "bin")])) == str(tool)
    assert find_program("tool", "bin") is None
    assert find_program("missing", str(tmp_path / "bin")) is None


def test_a_file_that_is_not_executable_is_not_a_program(tmp_path: Path) -> None:
    (tmp_path / "tool").write_text("not a program\n")
    assert find_program("tool", str(tmp_path)) is None
