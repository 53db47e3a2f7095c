"""Where the real agent transcripts are: ``../shared/transcripts`` beside the project,
read in place (never copied into it). A clone without them runs every other test; the
tests that need them skip and say why."""

from __future__ import annotations

from pathlib import Path

import pytest

TRANSCRIPTS = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"


def need_transcripts() -> Path:
    """The transcripts folder, or skip the calling test saying where it was looked for."""
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"needs the real agent transcripts at {TRANSCRIPTS} (not in this clone)")
    return TRANSCRIPTS
