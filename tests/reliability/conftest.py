"""Shared set-up of the reliability suite, and its figures at the end of a run."""

from __future__ import annotations

import pytest

from .crashkit import TALLIES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the trial counts (docs/RELIABILITY.md quotes them)."""
    if not TALLIES:
        return
    tr = terminalreporter
    tr.section("reliability figures")
    total = 0
    for name, t in sorted(TALLIES.items()):
        total += t.trials
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(t.outcomes.items()))
        tr.write_line(f"{name:<28} {t.trials:>5} trials  killed {t.killed:>5}  "
                      f"finished {t.finished:>4}" + (f"  ({outcomes})" if outcomes else "")
                      + "".join(f"  [{n}]" for n in t.notes))
    tr.write_line(f"{'total':<28} {total:>5} trials")
