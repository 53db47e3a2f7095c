"""Counting instructions between marks with callgrind, for the ``*_parts.py`` scripts.

A script wraps the functions it measures (``marked``) so each call says ``label>`` on
entry and ``label<`` on exit through ``dump``; callgrind, run with
``--dump-before=os_access``, writes one counter file per interval, and the script's
summary reads them back in order (``dump_files``, ``instructions``)."""

from __future__ import annotations

import functools
import glob
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def dump(name: str) -> None:
    """An interval's end: callgrind dumps its counters before each ``os_access`` call."""
    os.access(f"/@@{name}", os.F_OK)


def marked(fn: Callable[..., Any], label: str, mark: Callable[[str], None]) -> Any:
    """``fn``, marking ``label>`` before it and ``label<`` after it (a raise too)."""

    @functools.wraps(fn)
    def wrapper(*a: Any, **k: Any) -> Any:
        mark(label + ">")
        try:
            return fn(*a, **k)
        finally:
            mark(label + "<")

    return wrapper


def dump_files(out: Path, marks: list[str]) -> dict[int, str]:
    """``OUT/cg.out.N`` by N: dump k holds what ran between mark k-1 and mark k."""
    files = {int(p.rsplit(".", 1)[1]): p for p in glob.glob(str(out / "cg.out.*"))
             if p.rsplit(".", 1)[1].isdigit()}
    if len(files) < len(marks):
        raise SystemExit(f"{len(files)} dumps for {len(marks)} marks: not this run's")
    return files


def instructions(path: str) -> int:
    """The instructions one dump counted (its ``summary:`` or ``totals:`` line)."""
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return 0
