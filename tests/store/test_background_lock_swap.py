"""The background server's lock is taken before ``Store.open`` (``store/background_lock``):
``run/`` swapped for a link between the look at it and the lock's open. The open went by
path: the lock file was made where the link pointed (a file of that name there truncated
to the pid). Now ``run/`` is opened once without following a link and the lock made in it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.fs.folders import DESCRIPTORS
from turnback.store import background_lock


def test_a_link_swapped_for_run_after_its_look_gets_no_lock_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ws" / ".turnback"
    (root / "run").mkdir(parents=True, mode=0o700)
    outside = tmp_path / "outside"
    outside.mkdir()
    looked = background_lock._of_this_user
    calls = []

    def swap_after_the_look_at_run(st: os.stat_result) -> bool:
        calls.append(st)
        if len(calls) == 2:  # the store's root, then run/: swapped right after
            os.rename(root / "run", tmp_path / "run-aside")
            os.symlink(outside, root / "run")
        return looked(st)

    monkeypatch.setattr(background_lock, "_of_this_user", swap_after_the_look_at_run)
    try:
        fd = background_lock.take(root)
    except OSError:
        assert not DESCRIPTORS  # by path (Windows): the swap is seen, and refused
    else:
        assert fd is not None
        os.close(fd)
        assert os.listdir(tmp_path / "run-aside") == ["background.lock"]  # the one looked at
    assert os.listdir(outside) == []


def test_a_link_in_place_of_run_is_refused_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "ws" / ".turnback"
    root.mkdir(parents=True, mode=0o700)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "run")
    with pytest.raises(OSError, match=r"'run' is a symlink.*remove .*run"):
        background_lock.take(root)
    assert os.listdir(outside) == []
