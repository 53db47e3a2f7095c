"""The git that Push/Pull History run is never one in the working folder.

The server's working folder is the workspace (a stranger's repository): a ``git`` planted
there ran at Push History when PATH held an empty entry (``shutil.which`` answered ``git``,
relative), and on Windows in any case (fs/programs.py).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from turnback.sharing import gitrun

pytestmark = pytest.mark.skipif(os.name == "nt", reason="a POSIX executable is planted here")


@pytest.fixture
def real_git() -> str:
    found = shutil.which("git")
    if found is None:
        pytest.skip("git is not installed")
    return os.path.realpath(found)


@pytest.mark.parametrize("entry", ["", "."])
def test_git_binary_skips_the_working_folder_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_git: str, entry: str
) -> None:
    planted = tmp_path / "git"
    planted.write_text("#!/bin/sh\n: > PLANTED\n")
    planted.chmod(planted.stat().st_mode | stat.S_IXUSR)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep.join([entry, os.path.dirname(real_git)]))
    found = gitrun.git_binary()
    assert os.path.isabs(found)
    assert os.path.samefile(found, real_git)
    gitrun.run(["--version"])
    assert not (tmp_path / "PLANTED").exists()
