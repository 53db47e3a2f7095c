"""Fixtures of the importer tests: a store, and the real transcripts read in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_data import TRANSCRIPTS, need_transcripts

__all__ = ["REPO", "TRANSCRIPTS", "need_transcripts", "transcripts"]  # for the tests here
REPO = Path(__file__).resolve().parents[2]


def transcripts(pattern: str) -> list[Path]:
    """Real transcript files under ../shared/transcripts (never copied into the repo)."""
    return sorted(TRANSCRIPTS.glob(pattern))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No developer settings or home folder leak into an import."""
    for name in ("TURNBACK_STORE", "TURNBACK_SESSION", "TURNBACK_AUTO_INIT", "CLAUDE_CONFIG_DIR",
                 "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
