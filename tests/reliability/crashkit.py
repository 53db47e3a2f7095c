"""Killing a writer process at a random moment, reproducibly.

A trial forks a child that opens the store and runs one operation. The child is
SIGKILLed either

- from inside, at its k-th file-system mutation (``os.write``, ``os.replace``,
  ``os.unlink``, a file object's ``write`` …, counted by wrappers and a profile
  hook), half of the time after writing only a random prefix of a ``write`` —
  so every crash point between two system calls can be reached, torn writes
  included; or
- from outside, by the parent after a random delay, as a user's ``kill -9``.

The child reports acknowledgements (an event id after ``append`` returned, a
checkpoint id after ``checkpoint`` returned …) through a pipe, written with the
real ``os.write`` so reporting is never itself a crash point.
"""

from __future__ import annotations

import io
import os
import random
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

Ack = Callable[[str], None]

_REAL_WRITE = os.write
_MUTATORS = ("replace", "rename", "unlink", "rmdir", "mkdir", "symlink", "ftruncate",
             "truncate", "fchmod", "chmod", "fsync", "fdatasync", "link", "utime")
_IO_NAMES = frozenset({"write", "writelines", "flush", "truncate"})


@dataclass
class Outcome:
    killed: bool  # died of SIGKILL (inside or outside)
    acks: list[str]
    steps: int | None  # mutations counted (only when it was not killed)
    error: str | None = None  # a Python exception in the child: always a test failure


class _Switch:
    def __init__(self, kill_at: int | None, rng: random.Random) -> None:
        self.kill_at = kill_at
        self.n = 0
        self.rng = rng
        self.lock = threading.Lock()

    def step(self, fd: int | None = None, data: Any = None) -> None:
        with self.lock:
            self.n += 1
            hit = self.kill_at is not None and self.n >= self.kill_at
        if hit:
            if fd is not None and data is not None and len(data) > 1 and self.rng.random() < .5:
                _REAL_WRITE(fd, bytes(data)[: self.rng.randrange(1, len(data))])  # torn write
            os.kill(os.getpid(), signal.SIGKILL)


def _install(switch: _Switch) -> None:
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        switch.step(fd, data)
        return real_write(fd, data)

    os.write = write  # type: ignore[assignment]
    for name in _MUTATORS:
        real = getattr(os, name, None)
        if real is None:
            continue

        def wrap(*a: Any, _real: Any = real, **k: Any) -> Any:
            switch.step()
            return _real(*a, **k)

        setattr(os, name, wrap)
    # a rewind's swap of its write into place (``fs/exchange.py``: ``renameat2`` through
    # ctypes, no ``os`` call), where it renamed before swap27: a crash point as the rename was
    from turnback.fs import exchange

    real_swap = exchange._raw

    def swap(*a: Any) -> int:
        switch.step()
        return real_swap(*a)

    exchange._raw = swap  # type: ignore[assignment]
    real_open = os.open

    def open_(path: Any, flags: int, *a: Any, **k: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            switch.step()
        return real_open(path, flags, *a, **k)

    os.open = open_  # type: ignore[assignment]

    def profile(_frame: FrameType, event: str, arg: Any) -> None:
        # file objects' writes (open(...).write) are C methods: seen as c_call events
        if event == "c_call" and getattr(arg, "__name__", "") in _IO_NAMES and isinstance(
                getattr(arg, "__self__", None), io.IOBase):
            switch.step()

    sys.setprofile(profile)
    threading.setprofile(profile)


def run_child(fn: Callable[[Ack], None], *, kill_at: int | None = None,
              kill_after: float | None = None, seed: int = 0, timeout: float = 60.0,
              before: Callable[[Ack], None] | None = None) -> Outcome:
    """Run ``fn(ack)`` in a forked child; kill it at mutation ``kill_at`` or after
    ``kill_after`` seconds (neither: let it finish and count its mutations). ``before``:
    run first in the child, its mutations neither counted nor killed (a state that only a
    process's memory holds, set up for ``fn``)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            switch = _Switch(kill_at, random.Random(seed))

            def ack(msg: str) -> None:
                _REAL_WRITE(w, (msg.replace("\n", " ") + "\n").encode())

            if before is not None:
                before(ack)
            _install(switch)
            fn(ack)
            sys.setprofile(None)
            ack(f"#steps {switch.n}")
        except BaseException:
            sys.setprofile(None)
            try:
                _REAL_WRITE(w, ("#error " + traceback.format_exc().replace("\n", "\\n")
                                + "\n").encode())
            finally:
                code = 3
        os._exit(code)
    os.close(w)
    if kill_after is not None:
        threading.Timer(kill_after, _kill_quietly, (pid,)).start()
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
        if time.monotonic() > deadline:
            _kill_quietly(pid)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    lines = b"".join(chunks).decode().splitlines()
    # a line cut by the kill is not an acknowledgement
    text = b"".join(chunks).decode()
    if text and not text.endswith("\n"):
        lines = lines[:-1]
    acks = [ln for ln in lines if not ln.startswith("#")]
    steps = next((int(ln.split()[1]) for ln in lines if ln.startswith("#steps ")), None)
    error = next((ln[7:].replace("\\n", "\n") for ln in lines if ln.startswith("#error ")),
                 None)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return Outcome(killed, acks, steps, error)


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@dataclass
class Tally:
    """Counts of one kind of trial, for the run's summary (docs/RELIABILITY.md)."""

    trials: int = 0
    killed: int = 0
    finished: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # measured figures worth quoting

    def add(self, out: Outcome, outcome: str) -> None:
        self.trials += 1
        self.killed += out.killed
        self.finished += not out.killed
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    def add_case(self, case: str, refused: bool) -> None:
        """A hostile-input case: refused with an error, or done safely (contained)."""
        self.trials += 1
        self.finished += 1
        key = "refused" if refused else "contained"
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        self.cases.append(case)


TALLIES: dict[str, Tally] = {}


def tally(name: str) -> Tally:
    return TALLIES.setdefault(name, Tally())
