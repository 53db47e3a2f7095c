"""A passing run leaves nothing in the temporary folder. pytest removes a passing run's own
folders (pyproject: ``tmp_path_retention_policy = "failed"``) but not its per-user root
``pytest-of-<user>``: every suite that runs pytest (scripts/test.sh's, and py310, casefold,
fspaths after it) left that root behind, empty, until tests/conftest.py removed it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_passing_run_leaves_nothing_in_the_temporary_folder(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    env.pop("PYTEST_DEBUG_TEMPROOT", None)  # pytest's own override of TMPDIR
    # one small file of the suite, run as the suite runs: its conftest (whose session
    # fixture makes folders under pytest's root) and pyproject's options
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_records.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in temp.iterdir()) == []
