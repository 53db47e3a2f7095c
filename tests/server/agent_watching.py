"""What the agent-folder watch tests share: the paths a watch reported, and its two backends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback.server.watching.agent_watch import AgentWatch


class Reported:
    """The paths an ``AgentWatch`` reported (its callback), waited on by condition, never slept."""

    def __init__(self) -> None:
        self.paths: set[Path] = set()
        self.cond = threading.Condition()

    def __call__(self, paths: set[Path]) -> None:
        with self.cond:
            self.paths |= paths
            self.cond.notify_all()

    def wait_for(self, pred: Callable[[set[Path]], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred(self.paths):
                left = deadline - time.monotonic()
                assert left > 0, f"not seen; got {sorted(self.paths)}"
                self.cond.wait(left)

    def take(self, deadline: float) -> set[Path]:
        """What was reported so far, in one batch as the server's loop takes it (waiting
        until ``deadline`` for the first)."""
        with self.cond:
            while not self.paths and time.monotonic() < deadline:
                self.cond.wait(deadline - time.monotonic())
            out, self.paths = self.paths, set()
            return out

    def clear(self) -> None:
        with self.cond:
            self.paths.clear()


@pytest.fixture(params=["inotify", "watchfiles"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test once with inotify (where there is one) and once with watchfiles."""
    if request.param == "inotify" and not AgentWatch.inotify():
        pytest.skip("no inotify here")
    if request.param == "watchfiles":
        monkeypatch.setattr(AgentWatch, "inotify", staticmethod(lambda: False))
    return str(request.param)
