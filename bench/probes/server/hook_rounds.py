"""The hook path alone, for A/B runs: a fresh ``turnback`` process handing its command to
the server running on the workspace, without ``run.py``'s shadow git.

Per round: a no-op ``turnback checkpoint`` (nothing changed: "fresh ``turnback
checkpoint``, nothing changed, server running"); then a CLI checkpoint, 10 files edited
and ``turnback rewind`` to it at once ("rewind of 10 files, fresh CLI process", server
running). Each call is timed from spawn to exit; ``serverCpuMs`` is the server's CPU in
the call and ``serverSwitches`` its threads' voluntary context switches (a thread gone to
sleep: a hand-off between threads waited for, or a lock), from /proc. Prints the medians
with the load before and after. Run with two packages (``PYTHONPATH`` or ``--ref``)
alternating:

    BENCH_QUIET_SERVER=1 PYTHONPATH=<A or B>/server python bench/probes/server/hook_rounds.py \\
        --workspace <ws> --rounds 10

``--strace FILE``: the server's system calls over the rounds (``strace -c -f``; a round's
three calls together, and the checkpoint that waits for strace to attach); ``futex``
moves with contention, the file calls do not. The timings are then strace's.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from server_bench import arguments, cpu_ns, started, switches, traced, untraced


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__, rounds=10)
    ap.add_argument("--strace", type=Path, default=None, help="the server's system calls")
    a = ap.parse_args(argv)
    tb, ed, pid = started(a)
    tracer = traced(a, tb, pid)
    figs: dict[str, dict[str, list[float]]] = {
        k: {"wallMs": [], "serverCpuMs": [], "serverSwitches": []} for k in ("noop", "rewind10")}

    def timed(kind: str, call: Callable[[], tuple[float, object]]) -> None:
        c0, v0 = cpu_ns(pid), switches(pid)
        secs = call()[0]
        f = figs[kind]
        f["serverCpuMs"].append((cpu_ns(pid) - c0) / 1e6)
        f["serverSwitches"].append(switches(pid) - v0)
        f["wallMs"].append(secs * 1000)

    load = [os.getloadavg()[0]]
    try:
        for i in range(a.rounds):
            timed("noop", partial(tb.checkpoint_cli, f"no-op {i}"))
            cp = tb.checkpoint_cli(f"before {i}")[1]
            ed.edit(10)
            timed("rewind10", partial(tb.rewind_cli, cp))
    finally:
        untraced(tracer)
        tb.stop_server()
    load.append(os.getloadavg()[0])
    print(json.dumps({
        "ref": a.ref or os.environ.get("PYTHONPATH", "work tree"),
        "load": [round(x, 2) for x in load],
        **{k: {n: round(statistics.median(v), 2) for n, v in f.items()}
           for k, f in figs.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
