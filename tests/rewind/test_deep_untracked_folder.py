"""Folders nested deeper than Python's recursion limit where Turnback looks with a walk of
its own (not the scan's): a rewind that must put a file where such a folder stands, and
the store's walks (``status``'s disk usage, gc's stray temporary files) over a chain planted
in the store folder, which anyone who can write the workspace can write. ``os.walk`` recursed
a frame a folder (Python 3.11): at 1,100 folders each failed with ``RecursionError``
(redteam29; these fail before). The walk is ``fs/walk.py``'s, a loop."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import Conflict
from wsutil import write

# A chain of hundreds of folders through the case-folding FUSE passthrough (tests/casefs.py,
# ``TURNBACK_TEST_FS=casefold``) costs minutes: each lookup resolves the whole path in Python.
# What is tested here is the walks' depth, not case folding.
pytestmark = pytest.mark.skipif(
    os.environ.get("TURNBACK_TEST_FS") == "casefold",
    reason="a chain hundreds of folders deep takes minutes through the casefold FUSE mount")

DEEP = 1_100  # past the 1,000 frames of Python's default limit


@pytest.fixture
def planted() -> Iterator[list[Path]]:
    """Chains to remove after the test with ``rm -rf``: pytest's own clean-up of old
    temporary folders (``shutil.rmtree``) recurses too, and would fail on them."""
    made: list[Path] = []
    yield made
    for top in made:
        subprocess.run(["rm", "-rf", "--", str(top)], check=True)


def _chain(root: Path, rel: str, depth: int, leaf: str, made: list[Path]) -> str:
    """``depth`` folders ``d/…`` below ``root/rel`` (``mkdir -p``: Python's own
    ``os.makedirs`` recurses too) with ``leaf`` in the last; the leaf's path."""
    chain = "/".join([rel, *(["d"] * depth)])
    made.append(root / rel.split("/")[0])
    subprocess.run(["mkdir", "-p", chain], cwd=root, check=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        for part in chain.split("/"):
            nxt = os.open(part, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        out = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"kept\n")
        os.close(out)
    finally:
        os.close(fd)
    return f"{chain}/{leaf}"


def test_a_rewind_over_a_deep_untracked_folder_refuses_and_keeps_it(
        ws: Path, planted: list[Path]) -> None:
    write(ws, "top/name", "a file\n")
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
        (ws / "top" / "name").unlink()
        bottom = _chain(ws, "top/name", DEEP, "bottom.txt", planted)
        store.checkpoint()  # the chain past the scan's bound: skipped
        with pytest.raises(Conflict, match="cannot restore file 'top/name'"):
            store.rewind(cp.id)
        assert (ws / "top" / "name").is_dir()
        assert subprocess.run(["cat", bottom], cwd=ws, capture_output=True, check=True
                              ).stdout == b"kept\n"


def test_the_stores_walks_pass_a_deep_chain_planted_in_it(
        ws: Path, planted: list[Path]) -> None:
    write(ws, "a.txt", "1\n")
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        before = store.status()["bytes"]
        _chain(store.root, "planted", DEEP, "junk", planted)
        assert store.status()["bytes"] == before + len(b"kept\n")
        assert store.gc().checkpoints_dropped == []
        assert store.fsck().ok
