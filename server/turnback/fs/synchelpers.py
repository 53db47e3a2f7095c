"""Threads kept to wait for the disk: ``fsync_all``'s helpers, started once, not per call.

A rewind's journal sync ran on two threads started for it and ended after it (2
``clone3``, their stacks' ``mmap`` and ``munmap``, ``set_robust_list``, ``rseq``,
``exit``: bench/RESULTS.md, ``hot33``); under load a start cost 1.25 ms (``Issue 16,
fourth round``). Here a thread that finished a job waits for the next one, up to
``MAX_IDLE`` of them; more jobs at once start more threads, which end once the idle ones
are enough. Each job is a function and a lock the caller waits on.

A forked child (crash tests, agents' tools) has none of its parent's threads, and maybe a
lock its parent's threads held: at the fork the child's helpers are made anew, with new
locks and a new queue (``os.register_at_fork``; a ``getpid`` a call to tell was a system
call), so nothing of the parent's is waited for.
"""

from __future__ import annotations

import _thread
import os
from _queue import SimpleQueue  # the C queue: ``queue`` would import ``threading``
from collections.abc import Callable

MAX_IDLE = 4  # threads kept waiting: a call syncs 2-4 names, rarely up to 16 (ObjectStore)

Job = Callable[[], None]


class _Helpers:
    def __init__(self) -> None:
        self.jobs: SimpleQueue[tuple[Job, _thread.LockType]] = SimpleQueue()
        self.idle = 0  # threads waiting in ``jobs`` (or about to), each to take one job
        self.mutex = _thread.allocate_lock()

    def submit(self, job: Job, done: _thread.LockType) -> None:
        """Run ``job`` on a helper thread (an idle one, or one started for it), then
        release ``done``."""
        with self.mutex:
            take = self.idle > 0
            if take:
                self.idle -= 1
        if take:
            self.jobs.put((job, done))
        else:
            _thread.start_new_thread(self._work, (job, done))

    def _work(self, job: Job, done: _thread.LockType) -> None:
        while True:
            job()  # never raises: ``run_on_helper`` wraps it
            with self.mutex:
                stay = self.idle < MAX_IDLE
                if stay:
                    self.idle += 1
            # counted idle before the caller is told: its next call finds this thread
            done.release()
            if not stay:
                return  # enough wait already: this thread ends
            job, done = self.jobs.get()


_helpers = _Helpers()  # made here, not at a first call two threads could make at once


def _forget() -> None:
    global _helpers
    _helpers = _Helpers()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_forget)


def run_on_helper(job: Job, errors: list[BaseException]) -> _thread.LockType:
    """Start ``job`` on a helper thread; the lock returned is released once it is done,
    what it raised appended to ``errors`` (the caller raises it)."""
    done = _thread.allocate_lock()
    done.acquire()

    def wrapped() -> None:
        try:
            job()
        except BaseException as exc:  # reraised by the caller's thread
            errors.append(exc)

    _helpers.submit(wrapped, done)
    return done
