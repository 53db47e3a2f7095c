"""Two ways of one wait timed in alternating rounds, for ``journal_wait.py`` and
``safety_wait.py``: a 10-file rewind's journal and safety record as both write them, the
rounds (which side goes first alternating, so neither always meets a warm or a cold
disk), and the summary with the load before and after."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable

# a safety checkpoint's record (~300 bytes) and a 10-file rewind's journal (~1.7 KB)
RECORD = {"id": "0123456789ab", "label": "before rewind to 0123456789ab", "x": "y" * 200}
JOURNAL = {"id": "0123456789abcdef", "op": "rewind",
           "plan": {"write": {f"src/some/deep/folder/file_{i}.py": ["f", "ab" * 32, 1500]
                              for i in range(10)}, "create": {}, "remove": []}}


def alternate(sides: dict[str, Callable[[], float]], rounds: int,
              cleanup: Callable[[], None]) -> None:
    """Each side (seconds a call) ``rounds`` times, the first side first in even rounds;
    ``cleanup`` after, a raise too; then each side's median, quartiles and range in ms."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    load = [os.getloadavg()[0]]
    try:
        for i in range(rounds):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in order:
                times[name].append(sides[name]() * 1000)
    finally:
        load.append(os.getloadavg()[0])
        cleanup()
    print(f"{rounds} rounds each, alternating, load {load[0]:.2f} -> {load[1]:.2f}")
    for name, ts in times.items():
        q = statistics.quantiles(ts, n=4)
        print(f"  {name:9s} median {statistics.median(ts):6.2f} ms  quartiles {q[0]:6.2f} "
              f"{q[2]:6.2f}  min {min(ts):6.2f}  max {max(ts):6.2f}")
