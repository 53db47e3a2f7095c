"""Where an at-once request's wall goes besides its own CPU: the server's threads, counted.

Per round, as ``run.py``'s at-once phase (``os.sync()`` before the edits): 10 files edited,
``createCheckpoint`` asked at once, 0.25 s (git's commit, in ``run.py``); ``os.sync()``, 10
more edited, ``rewind`` to that checkpoint asked at once, 0.25 s. Before each request is
sent and after its answer is read, every server thread's ``/proc/<pid>/task/<tid>/``
counters: ``schedstat`` (time on a core, time runnable waiting for one), ``status``
(voluntary switches: going to sleep), ``stat`` (minor page faults). Per request:

- ``loopCpu``, ``loopQueue``: the event loop's thread (the main one) on a core, and
  runnable but waiting for a core (other processes, or our own threads, had them);
- ``loopSleep``: the rest of the wall, the loop's thread asleep: its own disk waits, a
  hand-off to a write thread (the rewind's whole run), the interpreter's lock (GIL)
  held by another thread, and the answer's way to this client;
- ``others``: every other thread's CPU, run-queue wait and switches in the request, by
  thread id (``threads``: the Python name of each, from ``py-spy dump``);
- ``monotonic``: the request's send and answer on ``CLOCK_MONOTONIC``, to place it in a
  ``perf sched record -k CLOCK_MONOTONIC`` of the same run (``bench/probes/server/wall_sched.py``).

Linux only. ``--json FILE`` keeps every sample. Two servers alternating for A/B:

    BENCH_QUIET_SERVER=1 PYTHONPATH=/abs/server python bench/probes/server/wall_threads.py \\
        --workspace WS --rounds 20 --json OUT.json
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from server_bench import arguments, started

# thread id -> (ns on a core, ns waiting for one, voluntary switches, minor faults,
# clock ticks in user mode, in the kernel)
Counters = dict[int, tuple[int, int, int, int, int, int]]
VOLUNTARY = re.compile(r"voluntary_ctxt_switches:\s*(\d+)")


def counters(pid: int) -> Counters:
    out: Counters = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                cpu, queue = (int(x) for x in f.read().split()[:2])
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                found = VOLUNTARY.search(f.read())
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            faults, user, kernel = int(fields[7]), int(fields[11]), int(fields[12])
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile (an fsync helper)
        out[int(tid)] = (cpu, queue, int(found[1]) if found else 0, faults, user, kernel)
    return out


def names(pid: int) -> dict[int, str]:
    """Thread id -> Python thread name, from ``py-spy dump`` (empty if it cannot)."""
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    try:
        text = subprocess.run([exe, "dump", "-p", str(pid)], capture_output=True, text=True,
                              timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {int(m[1]): m[2] for m in re.finditer(
        r'Thread (\d+) \((?:idle|active)[^)]*\): "([^"]*)"', text)}


def delta(before: Counters, after: Counters, tid: int) -> tuple[float, float, int, int]:
    b = before.get(tid, (0, 0, 0, 0, 0, 0))
    a = after.get(tid, b)
    return (a[0] - b[0]) / 1e6, (a[1] - b[1]) / 1e6, a[2] - b[2], a[3] - b[3]


def request(pid: int, call: Callable[[], Any]) -> tuple[dict[str, Any], Any]:
    c0 = counters(pid)
    m0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    t0 = time.perf_counter()
    result = call()
    wall = (time.perf_counter() - t0) * 1000
    m1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    c1 = counters(pid)
    cpu, queue, vol, faults = delta(c0, c1, pid)
    others = {}
    for tid in (set(c0) | set(c1)) - {pid}:
        o_cpu, o_queue, o_vol, _ = delta(c0, c1, tid)
        if o_cpu > 0.005 or o_vol:
            others[tid] = [round(o_cpu, 3), round(o_queue, 3), o_vol]
    # every thread's user and kernel clock ticks (10 ms each: summed over a run by the caller)
    ticks = [sum(c1[t][i] - c0.get(t, c1[t])[i] for t in c1) for i in (4, 5)]
    return {"wall": round(wall, 3), "userTicks": ticks[0], "kernelTicks": ticks[1],
            "loopCpu": round(cpu, 3), "loopQueue": round(queue, 3),
            "loopSleep": round(max(wall - cpu - queue, 0.0), 3), "loopSwitches": vol,
            "loopFaults": faults, "others": others, "monotonic": [m0, m1]}, result


def summary(rows: list[dict[str, Any]], tname: dict[int, str]) -> dict[str, Any]:
    def med(key: str) -> float:
        return round(statistics.median(float(r[key]) for r in rows), 2)

    by_thread: dict[str, list[float]] = {}
    for r in rows:
        for tid, (cpu, _q, _v) in r["others"].items():
            by_thread.setdefault(tname.get(int(tid), "other"), []).append(cpu)
    busy = [sum(v[0] for v in r["others"].values()) for r in rows]
    return {
        "wall": med("wall"), "loopCpu": med("loopCpu"), "loopQueue": med("loopQueue"),
        "loopSleep": med("loopSleep"), "loopSwitches": med("loopSwitches"),
        "othersCpu": round(statistics.median(busy), 2),
        # every thread's clock ticks over the run's requests: the kernel's share of their CPU
        "ticks": {"user": sum(r["userTicks"] for r in rows),
                  "kernel": sum(r["kernelTicks"] for r in rows)},
        "othersOver0.5ms": sum(b > 0.5 for b in busy),
        # thread: [requests it ran in, its CPU over all of them]
        "othersByThread": {k: [len(v), round(sum(v), 2)] for k, v in by_thread.items()},
        "walls": [r["wall"] for r in rows],
    }


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__, rounds=20)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    tb, ed, pid = started(a)
    tname = names(pid)
    load = [os.getloadavg()[0]]
    cps: list[dict[str, Any]] = []
    rws: list[dict[str, Any]] = []
    try:
        for i in range(a.rounds):
            os.sync()
            edited = ed.edit(10)
            row, (_, cp) = request(pid, lambda i=i: tb.checkpoint_server(f"at once {i}"))
            row["editedBytes"] = sum(len(v) for v in edited.values())
            cps.append(row)
            time.sleep(0.25)
            os.sync()
            ed.edit(10)
            row, _ = request(pid, lambda cp=cp: tb.rewind_server(cp))
            rws.append(row)
            time.sleep(0.25)
        tname.update(names(pid))  # threads started since (the pool's second, the hashers)
    finally:
        tb.stop_server()
    load.append(os.getloadavg()[0])
    # the first round's requests are the server's first of their kind: left out
    out = {"load": [round(x, 2) for x in load], "serverPid": pid, "clientPid": os.getpid(),
           "threads": {str(k): v for k, v in tname.items()},
           "checkpointAtOnce": summary(cps[1:], tname), "rewindAtOnce": summary(rws[1:], tname)}
    print(json.dumps(out))
    if a.json is not None:
        a.json.write_text(json.dumps({"summary": out, "checkpoints": cps, "rewinds": rws}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
