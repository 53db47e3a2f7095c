"""``fsync_all``'s helper threads are kept between calls (branch `rewind34`,
``fs/synchelpers.py``): every call started a thread per fsync but the first (a rewind's
journal sync: two), and ended them. A second call now starts none; a failure on a helper
is still the caller's; a forked child, which has none of its parent's threads, starts its
own and does not wait for its parent's (a child that does fails the test within
``CHILD_BOUND``, killed: it hung the test for ever before, redteam46)."""

from __future__ import annotations

import _thread
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnback.fs import atomic


def _files(tmp_path: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        p = tmp_path / f"f{i}"
        p.write_bytes(b"x")
        out.append(p)
    return out


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    started = [0]
    real = _thread.start_new_thread

    def counted(fn: Callable[..., Any], args: tuple[Any, ...]) -> int:
        started[0] += 1
        return real(fn, args)

    monkeypatch.setattr(_thread, "start_new_thread", counted)
    return started


def test_a_second_call_starts_no_thread(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(tmp_path, 3)
    # the helpers this process needs (4 a call), started once
    atomic.fsync_all(files, [tmp_path], meanwhile=lambda: None)
    started = _counting(monkeypatch)
    ran: list[str] = []
    for _ in range(5):
        atomic.fsync_all(files, [tmp_path], meanwhile=lambda: ran.append("meanwhile"))
    assert ran == ["meanwhile"] * 5
    assert started[0] == 0, f"{started[0]} threads started for 5 calls of 4 syncs each"


def test_a_helpers_failure_is_raised_by_the_caller(tmp_path: Path) -> None:
    files = _files(tmp_path, 2)
    with pytest.raises(FileNotFoundError):
        atomic.fsync_all([files[0], tmp_path / "gone", files[1]])
    atomic.fsync_all(files)  # the helpers still serve the next call


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_syncs_with_its_own_helpers(tmp_path: Path) -> None:
    files = _files(tmp_path, 3)
    atomic.fsync_all(files)  # the parent's helpers, idle now
    pid = os.fork()
    if pid == 0:  # the child: its parent's helpers are not there to take a job
        code = 1
        try:
            atomic.fsync_all(files, [tmp_path])
            code = 0
        finally:
            os._exit(code)
    # waited for with a bound: a child given its parent's helpers (no fork handler) waits
    # for ever on a job no thread of its own takes, and this test hung with it
    status = _reaped(pid, CHILD_BOUND)
    assert status is not None, (
        f"the forked child's fsync_all did not return in {CHILD_BOUND} s: it waited for "
        "helpers it does not have (killed)")
    assert os.waitstatus_to_exitcode(status) == 0


CHILD_BOUND = 60.0  # seconds: a child's 4 syncs take milliseconds; only a hang reaches it


def _reaped(pid: int, bound: float) -> int | None:
    """The child's wait status once it has ended; None (and the child killed and reaped)
    if it has not within ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None
