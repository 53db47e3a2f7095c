"""The link probe's files go into an open store's root on the asking folder's device, where
the next open of that store removes one a killed process left (trust31's decided fix,
trust33).

``fs/hardlinks._probe`` made its two empty files in the folder of the put back that asked:
a process killed between their ``open`` and ``unlink`` left an empty ``.turnback-tmp-…``
there, which only a later rewind's or recovery's clean-up of that folder removed
(``tests/rewind/test_probe_killed_leftover.py``); in a folder no later plan touches, it
stayed for good. Now, with a store open on that device, the probe is made in the store's
root (``fs/probeplace.place``), and ``Store.open`` removes a probe file there whose writer
is gone (``probeplace.sweep``): nothing is left among the user's files. A store on another
device than the folder keeps the probe in the folder, as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import probeplace, rewindnames
from wsutil import dead_pid, write

from .probe_kill import probe_killed_at_its_link, probes

pytestmark = pytest.mark.skipif(
    os.environ.get("TURNBACK_FS_PATHS") == "1" or not hasattr(os, "fork"),
    reason="the probe asks folders held by descriptor; the kill needs fork")


def _of(pid: int, names: list[str]) -> list[str]:
    return [n for n in names if (rewindnames.parse(n) or (0, ""))[0] == pid]


def test_a_probe_killed_in_a_folder_no_plan_touches_leaves_nothing_there(ws: Path) -> None:
    write(ws, "d/a.txt", "one\n")
    with Store.open(ws) as store:
        root = store.root
        store.checkpoint(label="first")
        killed = probe_killed_at_its_link(ws / "d")
    assert probes(ws / "d") == [], "the probe's file was made among the user's files"
    left = _of(killed, probes(root))
    assert len(left) == 1 and (root / left[0]).stat().st_size == 0, probes(root)
    # a user's file of that name shape (a dead pid's) with content, and a live process's
    # probe file: both left by the sweep
    users = rewindnames.probe(dead_pid(), "abcd")
    (root / users).write_text("mine\n")
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        theirs = rewindnames.probe(live.pid, "0123")
        (root / theirs).write_bytes(b"")
        with Store.open(ws) as again:  # no journal: no rewind's clean-up runs
            assert [c.label for c in again.checkpoints()] == ["first"]
        now = probes(root)
        assert left[0] not in now, now
        assert theirs in now and (root / users).read_text() == "mine\n", now
        assert probes(ws / "d") == []
    finally:
        assert live.stdin is not None
        live.stdin.close()
        live.wait()


def test_the_probe_keeps_its_folder_once_the_store_is_closed_or_replaced(ws: Path) -> None:
    write(ws, "d/a.txt", "one\n")
    dev = os.stat(ws / "d").st_dev
    with Store.open(ws) as store:
        root = store.root
        place = probeplace.place(dev)
        assert place is not None and place.path == str(root)
        place.close()
        moved = root.with_name("moved")
        root.rename(moved)
        root.mkdir()  # another folder at the store's path: not the store's root
        assert probeplace.place(dev) is None
        root.rmdir()
        moved.rename(root)
    assert probeplace.place(dev) is None  # closed: no open store's root is there


def test_a_store_on_another_device_leaves_the_probe_in_the_folder(ws: Path) -> None:
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(ws).st_dev:
        pytest.skip("needs a folder on another device than the workspace (/dev/shm)")
    elsewhere = Path(tempfile.mkdtemp(prefix="tb-store-", dir="/dev/shm"))
    try:
        write(ws, "d/a.txt", "one\n")
        with Store.open(ws, store_dir=elsewhere / "store") as store:
            store.checkpoint(label="first")
            killed = probe_killed_at_its_link(ws / "d")
            assert probes(store.root) == []
        assert len(_of(killed, probes(ws / "d"))) == 1  # as before trust33: its clean-up's
    finally:
        shutil.rmtree(elsewhere)
