"""Fixtures of the store's unit tests: a fresh workspace and its store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback import Store


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace folder (the store goes to ``ws/.turnback``)."""
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.fixture
def store(ws: Path) -> Iterator[Store]:
    s = Store.open(ws)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _no_turnback_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's TURNBACK_* variables must not redirect the tests' stores."""
    for name in ("TURNBACK_STORE", "TURNBACK_SESSION", "TURNBACK_AUTO_INIT"):
        monkeypatch.delenv(name, raising=False)
