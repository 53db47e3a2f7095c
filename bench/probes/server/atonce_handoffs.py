"""The thread hand-offs of the server's at-once checkpoint and rewind, counted.

Per round: 10 files edited and ``createCheckpoint`` asked at once; 10 more edited and a
``rewind`` to it asked at once; 0.3 s of quiet. For each request: the wall time, the
server's CPU (every thread, as ``server_rounds.py``), its event loop thread's part, and the
voluntary context switches (a thread going to sleep: a hand-off waited for, or a wait on
I/O) of the whole process and of the event loop's thread, from
``/proc/<pid>/task/*/status``: counts, which do not move with the machine's load. Linux
only. Run twice with two servers (``PYTHONPATH`` or ``--ref``) alternating, for A/B pairs:

    BENCH_QUIET_SERVER=1 python bench/probes/server/atonce_handoffs.py --workspace bench/work/ws \\
        --rounds 20
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from server_bench import arguments, cpu_ns, started, switches, traced, untraced


def med(values: list[float], digits: int = 2) -> float:
    return round(statistics.median(values), digits)


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__, rounds=20)
    ap.add_argument("--files", type=int, default=10, help="files edited before each request")
    ap.add_argument("--alternate", action="store_true",
                    help="figures of even and odd rounds apart (a server that alternates two "
                         "ways of answering, round by round: the pairs then share a moment)")
    ap.add_argument("--strace", type=Path, default=None,
                    help="count the server's system calls over the rounds (strace -c -f) into "
                         "FILE; the timings are then strace's, not the server's")
    a = ap.parse_args(argv)
    tb, ed, pid = started(a)
    tracer = traced(a, tb, pid)
    kinds = ("checkpointAtOnce", "rewindAtOnce")
    parts = ("even", "odd") if a.alternate else ("all",)
    figs: dict[str, dict[str, list[float]]] = {
        f"{k}.{p}": {"wallMs": [], "cpuMs": [], "loopCpuMs": [], "switches": [],
                     "loopSwitches": []}
        for k in kinds for p in parts}
    load = [os.getloadavg()[0]]
    try:
        for i in range(a.rounds):
            cp = ""
            for kind in kinds:
                ed.edit(a.files)
                c0, m0 = cpu_ns(pid), cpu_ns(pid, only=pid)
                v0, w0 = switches(pid), switches(pid, only=pid)
                if kind == "checkpointAtOnce":
                    secs, cp = tb.checkpoint_server(f"at once {i}")
                else:
                    secs = tb.rewind_server(cp)[0]
                f = figs[f"{kind}.{parts[i % len(parts)]}"]
                f["cpuMs"].append((cpu_ns(pid) - c0) / 1e6)
                f["loopCpuMs"].append((cpu_ns(pid, only=pid) - m0) / 1e6)
                f["switches"].append(switches(pid) - v0)
                f["loopSwitches"].append(switches(pid, only=pid) - w0)
                f["wallMs"].append(secs * 1000)
            time.sleep(0.3)
    finally:
        untraced(tracer)
        tb.stop_server()
    load.append(os.getloadavg()[0])
    out: dict[str, object] = {"ref": a.ref or os.environ.get("PYTHONPATH", "work tree"),
                              "load": [round(x, 2) for x in load],
                              **{k: {n: med(v) for n, v in f.items()} for k, f in figs.items()}}
    if a.alternate:  # round 2j against round 2j+1: how many pairs the odd round was lower
        for kind in kinds:
            even, odd = figs[f"{kind}.even"], figs[f"{kind}.odd"]
            out[f"{kind}.oddLower"] = {
                n: f"{sum(o < e for e, o in zip(even[n], odd[n], strict=False))}/{len(odd[n])}"
                for n in ("wallMs", "cpuMs", "switches")}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
