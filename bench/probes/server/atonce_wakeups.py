"""The server's at-once checkpoint as ``run.py``'s at-once phase asks it, without the git side.

Per round: 10 files edited, ``createCheckpoint`` asked at once, then 0.25 s of quiet (about
git's own at-once commit in ``run.py``, when the server does what follows an answer). Prints
medians of the wall time, the server's CPU in the request (``cpuMs``, every thread, as
``server_rounds.py``) and its event loop thread's part (``loopCpuMs``), and how often the
event loop's thread went to sleep and woke (voluntary context switches, from
``/proc/<pid>/task/<pid>/status``) during the request and over the whole round: counts,
which do not move with the machine's load. Linux only.

    python bench/probes/server/atonce_wakeups.py --workspace bench/work/ws --rounds 30 [--ref main]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from server_bench import arguments, cpu_ns, started, switches


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__, rounds=30)
    a = ap.parse_args(argv)
    tb, ed, pid = started(a)
    wall: list[float] = []
    cpu: list[float] = []
    loop: list[float] = []
    in_request: list[int] = []
    in_round: list[int] = []
    load = [os.getloadavg()[0]]
    try:
        for i in range(a.rounds):
            ed.edit(10)
            c0, m0, v0 = cpu_ns(pid), cpu_ns(pid, only=pid), switches(pid, only=pid)
            secs, _ = tb.checkpoint_server(f"at once {i}")
            cpu.append((cpu_ns(pid) - c0) / 1e6)
            loop.append((cpu_ns(pid, only=pid) - m0) / 1e6)
            in_request.append(switches(pid, only=pid) - v0)
            wall.append(secs * 1000)
            time.sleep(0.25)
            in_round.append(switches(pid, only=pid) - v0)
    finally:
        tb.stop_server()
    load.append(os.getloadavg()[0])
    print(json.dumps({
        "ref": a.ref or "work tree", "load": [round(x, 2) for x in load],
        "wallMs": round(statistics.median(wall), 2), "cpuMs": round(statistics.median(cpu), 2),
        "loopCpuMs": round(statistics.median(loop), 2),
        "loopSwitchesRequest": [statistics.median(in_request),
                                round(statistics.mean(in_request), 2)],
        "loopSwitchesRound": [statistics.median(in_round), round(statistics.mean(in_round), 2)],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
