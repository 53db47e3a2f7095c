"""The stat cache row's racy test on the walk's hot path (``scan.py``, ``_list_in``), per
file: the 50 ms margin alone (before redteam32) against the rule for filesystems of whole
seconds (a whole-second mtime trusted only 2.05 s after it), in the form first committed
(a modulo every file) and the one kept (the 2.05 s test first). Over 50,000 ``lstat``
results of the files under a folder (repeated to 50,000), alternating, min of 5 each round.

    python bench/probes/checkpoint/redteam32_racy_rule.py FOLDER
"""

from __future__ import annotations

import os
import sys
import time
import timeit
from collections.abc import Callable

RACY, SECOND, COARSE = 50_000_000, 1_000_000_000, 2_050_000_000


def main() -> None:
    sts = [os.lstat(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[1]) for f in fs]
    sts = (sts * (50_000 // len(sts) + 1))[:50_000]
    row = time.time_ns()

    def before() -> int:
        return sum(1 for st in sts if st.st_mtime_ns < row - RACY)

    def modulo_each() -> int:
        return sum(1 for st in sts
                   if st.st_mtime_ns < row - (RACY if st.st_mtime_ns % SECOND else COARSE))

    def coarse_first() -> int:
        return sum(1 for st in sts if st.st_mtime_ns < row - COARSE or (
            st.st_mtime_ns % SECOND != 0 and st.st_mtime_ns < row - RACY))

    assert before() == modulo_each() == coarse_first()
    whole = sum(st.st_mtime_ns % SECOND == 0 for st in sts)
    print(f"{len(sts)} files, {whole} with whole-second mtimes")
    variants: list[tuple[str, Callable[[], int]]] = [
        ("before", before), ("modulo each", modulo_each), ("2.05 s first", coarse_first)]
    for r in range(5):
        got = {name: min(timeit.repeat(fn, number=1, repeat=5)) for name, fn in variants}
        base = got["before"]
        print(f"round {r} (load {os.getloadavg()[0]:.2f}): " + ", ".join(
            f"{name} {t * 1e3:.2f} ms ({(t - base) * 1e9 / len(sts):+.0f} ns/file)"
            for name, t in got.items()))


if __name__ == "__main__":
    main()
