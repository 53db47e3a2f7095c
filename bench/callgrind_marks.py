"""Counting instructions between marks with callgrind, for the ``*_parts.py`` scripts.

A script wraps the functions it measures (``marked``) so each call says ``label>`` on
entry and ``label<`` on exit through ``dump``; callgrind, run with
``--dump-before=os_access``, writes one counter file per interval, and the script's
summary reads them back in order (``dump_files``, ``instructions``) and adds each
interval to the parts open then (``RoundCounts``)."""

from __future__ import annotations

import functools
import glob
import json
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)


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


# (module, owner, attribute, part): a rewind's parts, in the order they run (``preload``
# inside ``journal``'s wait, ``lookafter`` inside ``apply``); owner None for a module's
# function
REWIND_PARTS: tuple[tuple[str, str | None, str, str], ...] = (
    ("turnback.store.rewind_ops", "RewindOps", "_snapshot", "scan"),
    ("turnback.store.rewind_ops", "RewindOps", "_plan", "plan"),
    ("turnback.store.rewind_ops", "RewindOps", "_check_objects", "checkobjects"),
    ("turnback.rewind.apply", None, "check_conflicts", "conflicts"),
    ("turnback.store.rewind_ops", "RewindOps", "_commit_safety", "commitsafety"),
    ("turnback.rewind.oplog", "OpLog", "begin", "journal"),
    ("turnback.rewind.apply", "Applier", "preload", "preload"),
    ("turnback.rewind.apply", "Applier", "apply", "apply"),
    ("turnback.rewind.apply", "Applier", "_check_replaced", "lookafter"),
    ("turnback.rewind.apply", "Applier", "release", "release"),
)


def recorder(marks: list[str]) -> Callable[[str], None]:
    """A ``mark``: the name appended to ``marks`` (the summary's order) and an interval
    ended there."""

    def mark(name: str) -> None:
        marks.append(name)
        dump(name)

    return mark


def wrap_on(owner: Any, attr: str, label: str, mark: Callable[[str], None]) -> None:
    """Mark ``attr`` on the class or module named, where it defines the method or inherits
    it (``_snapshot`` is ``CheckpointOps``'): not ``wrap_part``, which takes only a class's
    own and a module function's every binding."""
    static = isinstance(getattr(owner, "__dict__", {}).get(attr), staticmethod)
    wrapper = marked(getattr(owner, attr), label, mark)
    setattr(owner, attr, staticmethod(wrapper) if static else wrapper)


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


def wrap_part(mod: Any, owner: str | None, attr: str, mark: Callable[[str], None]) -> None:
    """Mark a method where its class defines it, or a module's function and every
    ``turnback`` module's name bound to it (``from … import name``); a part absent at
    this commit is left out. Labelled ``Owner.attr`` or ``module.attr``."""
    label = f"{owner or mod.__name__.rsplit('.', 1)[1]}.{attr}"
    if owner is not None:
        cls = getattr(mod, owner, None)
        raw = None if cls is None else cls.__dict__.get(attr)
        if raw is None:
            return
        if isinstance(raw, staticmethod):
            setattr(cls, attr, staticmethod(marked(raw.__func__, label, mark)))
        else:
            setattr(cls, attr, marked(raw, label, mark))
        return
    fn = getattr(mod, attr, None)
    if fn is None:
        return
    new = marked(fn, label, mark)
    for other in list(sys.modules.values()):
        name = getattr(other, "__name__", "") or ""
        if name.startswith("turnback") and getattr(other, attr, None) is fn:
            setattr(other, attr, new)


def run_atonce(marks_path: Path, argv: list[str], marks: list[str],
               on_phase: Callable[[str], None], wrap: Callable[[], None]) -> None:
    """``atonce_parts.main(argv)`` with its phase marks given to ``on_phase`` and ``wrap``
    called once it (and so ``turnback``) is imported; ``marks`` written to ``marks_path``
    at the end, after a raise too, for the summary."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import atonce_parts

    atonce_parts.mark = on_phase  # type: ignore[attr-defined]
    wrap()
    try:
        atonce_parts.main(argv)
    finally:
        marks_path.write_text(json.dumps(marks))


class RoundCounts(Generic[K]):
    """Each part's instructions a round: inclusive (every interval while it is on the
    stack), own (the intervals where it is the innermost part open, else ``(phase)``'s)
    and its calls; ``(phase)`` inclusive is the phase's whole. A part a kept round did not
    see counts 0 in it (``median``)."""

    def __init__(self) -> None:
        self.incl: dict[K, list[int]] = defaultdict(list)
        self.own: dict[K, list[int]] = defaultdict(list)
        self.calls: dict[K, list[int]] = defaultdict(list)
        self.rounds = 0
        self._incl: dict[K, int] = defaultdict(int)
        self._own: dict[K, int] = defaultdict(int)
        self._calls: dict[K, int] = defaultdict(int)

    def charge(self, cost: int, stack: list[str], key: Callable[[str], K]) -> None:
        """One interval's ``cost`` to the round: to every part on ``stack``, and as own
        to the innermost."""
        self._incl[key("(phase)")] += cost
        for label in set(stack):
            self._incl[key(label)] += cost
        self._own[key(stack[-1] if stack else "(phase)")] += cost

    def called(self, key: K) -> int:
        """The round's calls of ``key`` so far (0 for none, kept as a row)."""
        return self._calls[key]

    def call(self, key: K) -> None:
        self._calls[key] += 1

    def close(self, keep: bool = True) -> None:
        """End the round: its counts appended when ``keep``, dropped otherwise."""
        if keep:
            for key in {*self._incl, *self._calls}:
                self.incl[key].append(self._incl[key])
                self.own[key].append(self._own[key])
                self.calls[key].append(self._calls[key])
            self.rounds += 1
        self._incl.clear(), self._own.clear(), self._calls.clear()

    def median(self, counts: dict[K, list[int]], key: K) -> float:
        """The median over the kept rounds, a round without ``key`` counted as 0."""
        values = counts[key]
        return statistics.median(values + [0] * (self.rounds - len(values)))
