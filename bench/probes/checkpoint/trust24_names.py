"""What the scan pays for leaving out a rewind's marked temporary names (trust24).

``snapshot/ignore.IgnoreRules.in_dir`` now asks of a name whether it starts with ``.``, then,
of one that is not a folder, whether it carries the mark (``fs/rewindnames.is_marked``).
The scan asks ``in_dir`` only of a name with no stat-cache row (a new file, or every file of
a first scan). ``count``: a cold checkpoint and a no-op one of WORKSPACE with ``in_dir`` counted
(calls, and calls that reached the mark's check), its arguments saved to NAMES.
``time``: ``in_dir`` over NAMES (min of ROUNDS passes), and the added test alone over the
same names, in the tree on ``PYTHONPATH``: run it in the branch's tree and the base's, alternately.
``passes``: P passes of ``in_dir`` only, for callgrind (P=2 minus P=1: one pass's instructions).

    PYTHONPATH=server python bench/probes/checkpoint/trust24_names.py count WORKSPACE NAMES
    PYTHONPATH=server python bench/probes/checkpoint/trust24_names.py time WORKSPACE NAMES [ROUNDS]
    PYTHONHASHSEED=0 PYTHONPATH=server valgrind --tool=callgrind \
        python bench/probes/checkpoint/trust24_names.py passes WORKSPACE NAMES 0 P
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.snapshot import ignore

PREFIX = ".turnback-tmp-"


def count(ws: Path, names: Path) -> None:
    real = ignore.IgnoreRules.in_dir
    seen: list[tuple[str, str, str, bool]] = []
    marked = [0]

    def counted(self: Any, dir_rel: str, rel: str, name: str, is_dir: bool) -> bool:
        seen.append((dir_rel, rel, name, is_dir))
        if name[:1] == "." and not is_dir and name.startswith(PREFIX):
            marked[0] += 1
        return bool(real(self, dir_rel, rel, name, is_dir))

    ignore.IgnoreRules.in_dir = counted  # type: ignore[method-assign]
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        cold = len(seen)
        names.write_text(json.dumps(seen))
        store.checkpoint()
        warm = len(seen) - cold
    print(f"cold checkpoint: in_dir {cold} calls ({sum(not s[3] for s in seen[:cold])} of "
          f"files), {marked[0]} reached the mark's check; no-op checkpoint after: {warm} calls")


def timed(ws: Path, names: Path, rounds: int, passes: int | None = None) -> None:
    """``in_dir`` over the names; with ``passes`` (for callgrind) that many passes only."""
    args = [tuple(a) for a in json.loads(names.read_text())]
    with Store.open(ws) as store:
        in_dir = store.ignore.in_dir
        for a in args:  # warm the rule caches
            in_dir(*a)
        if passes is not None:
            for _ in range(passes):
                for a in args:
                    in_dir(*a)
            return
        best = check = bare = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter_ns()
            for a in args:
                in_dir(*a)
            t1 = time.perf_counter_ns()
            for _d, _r, name, is_dir in args:
                if name[:1] == "." and not is_dir and name.startswith(PREFIX):
                    pass
            t2 = time.perf_counter_ns()
            for _d, _r, _name, _is_dir in args:
                pass
            t3 = time.perf_counter_ns()
            best, check, bare = min(best, t1 - t0), min(check, t2 - t1), min(bare, t3 - t2)
    n = len(args)
    print(f"{ignore.__file__}: in_dir over {n} names {best / 1e6:.2f} ms "
          f"({best / n:.0f} ns a name); the added test alone {(check - bare) / 1e6:.2f} ms "
          f"({(check - bare) / n:.1f} ns a name); load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    mode, ws_arg, names_arg = sys.argv[1:4]
    if mode == "count":
        count(Path(ws_arg), Path(names_arg))
    else:
        rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 15
        timed(Path(ws_arg), Path(names_arg), rounds, int(sys.argv[5]) if mode == "passes" else None)
