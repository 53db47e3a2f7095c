"""A rewind killed, its pid since given to an unrelated live process (after a reboot pids
start again from 1, so a server's pid is likely some other process's at the next login).
Before (redteam26) the recovery took a live pid as the rewind's own, still holding its names:
a late write held by a second name was not put back (the path at the target, the write in a
name the scan leaves out of every checkpoint) and the names were left for good."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import rewindnames
from wsutil import journal_left, rewind_killed_before_release

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"),
                                reason="a process's start time is read from /proc (Linux)")


def test_a_process_start_is_read_from_proc() -> None:
    before = time.time()
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        started = rewindnames.started(other.pid)
        assert started is not None
        # the kernel's clock ticks are 10 ms; realtime against boottime drifts a little
        assert before - 0.1 < started < time.time() + 0.1
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait()
    assert rewindnames.started(2**31) is None


def test_a_killed_rewinds_pid_reused_by_a_live_process_does_not_keep_its_names(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    op = rewind_killed_before_release(ws)
    kept = ws / "d" / rewindnames.make(os.getpid(), rw.kept_name(op, "d/a.txt"))
    kept.write_text("a3, saved by the agent as the rewind ran\n")  # a write before the rename
    # the names given the pid of the test runner's parent, alive, as if it started after
    # them (a rename sets a name's ctime to now, so the start is told, not waited for)
    live = os.getppid()
    real = rewindnames.started
    monkeypatch.setattr(rewindnames, "started", lambda pid: (
        time.time() + 60 if pid == live else real(pid)))
    for name in os.listdir(ws / "d"):
        got = rewindnames.parse(name)
        if got is not None:
            os.rename(ws / "d" / name, ws / "d" / rewindnames.make(live, got[1]))
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert (ws / "d/a.txt").read_text() == "a3, saved by the agent as the rewind ran\n"
    assert (ws / "d/b.txt").read_text() == "b1\n"
    assert not [n for n in os.listdir(ws / "d") if n.startswith(rw.TMP_PREFIX)]
