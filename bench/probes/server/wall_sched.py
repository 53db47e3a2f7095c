"""The at-once requests of a ``wall_threads.py`` run, split by what the kernel's scheduler saw.

Record the run with the scheduler's events on ``CLOCK_MONOTONIC`` (the clock
``wall_threads.py`` stamps each request with), then split it:

    perf sched record -k CLOCK_MONOTONIC -o SCHED.data -- sleep 60 &
    BENCH_QUIET_SERVER=1 PYTHONPATH=/abs/server python bench/probes/server/wall_threads.py \\
        --workspace WS --rounds 12 --json RUN.json
    perf sched timehist -i SCHED.data --state > TIMEHIST.txt
    python bench/probes/server/wall_sched.py RUN.json TIMEHIST.txt

Per request, its working thread (the server thread that ran most in it: the event loop
for the at-once checkpoint, a write thread for the rewind) from send to answer read:

- ``run``: on a core;
- ``queue``: woken but waiting for a core (each run's "sch delay");
- ``disk``: asleep in the disk (state D: its own fsync, a read);
- ``sleep``: asleep otherwise (state S: a lock, the interpreter's lock, the fsync helper
  threads' wait, a hand-off), and ``othersInSleep``: how long the server's other threads
  ran meanwhile (a thread that holds the GIL while the request's thread waits for it is
  running then); ``gilSlices``: sleeps of 4 ms or more during which the others ran 4 ms
  or more (a request behind a CPU-bound thread loses whole switch intervals, 5 ms);
- who had the cores while the request's threads (and the client) waited for one: the
  server's own threads, the client, or other processes (milliseconds over the run).
"""

from __future__ import annotations

import collections
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any, NamedTuple

LINE = re.compile(r"\s*([\d.]+)\s+\[(\d+)\]\s+(\S.*?)\[(\d+)(?:/(\d+))?\]\s+([\d.]+)\s+"
                  r"([\d.]+)\s+([\d.]+)\s+(\S)")


class Run(NamedTuple):
    start: float  # seconds, CLOCK_MONOTONIC
    end: float
    tid: int
    pid: int
    delay: float  # waited for a core before this run
    state: str  # how it left the core: R (preempted), S, D, ...


def runs(lines: list[str]) -> list[Run]:
    out = []
    for line in lines:
        m = LINE.match(line)
        if m is None:
            continue
        end, ran = float(m[1]), float(m[8]) / 1000
        tid = int(m[4])
        out.append(Run(end - ran, end, tid, int(m[5]) if m[5] else tid, float(m[7]) / 1000,
                       m[9]))
    return out


def overlap(r: Run, a: float, b: float) -> float:
    return max(0.0, min(r.end, b) - max(r.start, a))


def split(req: dict[str, Any], by_tid: dict[int, list[Run]], server: set[int]) -> dict[str, Any]:
    a, b = req["monotonic"][0] / 1e9, req["monotonic"][1] / 1e9
    work = max(server, key=lambda t: sum(overlap(r, a, b) for r in by_tid.get(t, [])))
    acc = {"run": 0.0, "queue": 0.0, "disk": 0.0, "sleep": 0.0, "othersInSleep": 0.0}
    slices = 0
    prev: Run | None = None
    for r in by_tid.get(work, []):
        if r.end < a:
            prev = r
            continue
        if r.start > b:
            break
        if prev is not None and prev.end < r.start:
            g0, g1 = max(prev.end, a), min(r.start, b)
            if g1 > g0:
                queued = min(r.delay, g1 - g0)
                acc["queue"] += queued
                asleep = g1 - g0 - queued
                if prev.state == "D":
                    acc["disk"] += asleep
                elif prev.state != "R":
                    acc["sleep"] += asleep
                    ran = sum(overlap(o, g0, g1 - queued) for t in server - {work}
                              for o in by_tid.get(t, []))
                    acc["othersInSleep"] += ran
                    slices += asleep >= 0.004 and ran >= 0.004
                else:
                    acc["queue"] += asleep
        acc["run"] += overlap(r, a, b)
        prev = r
    out: dict[str, Any] = {k: round(v * 1000, 2) for k, v in acc.items()}
    out.update(wall=req["wall"], thread=work, gilSlices=slices)
    return out


def holders(reqs: list[dict[str, Any]], all_runs: list[Run], spid: int, cpid: int,
            names: dict[int, str]) -> collections.Counter[str]:
    """Who ran while a thread of the server or the client waited for a core in a request."""
    tot: collections.Counter[str] = collections.Counter()
    for req in reqs:
        a, b = req["monotonic"][0] / 1e9, req["monotonic"][1] / 1e9
        inside = [r for r in all_runs if r.end > a - 0.05 and r.start < b]
        for r in inside:
            if r.pid not in (spid, cpid) or r.delay <= 0:
                continue
            w0, w1 = max(r.start - r.delay, a), min(r.start, b)
            if w1 <= w0:
                continue
            waiter = "server" if r.pid == spid else "client"
            for o in inside:
                ov = overlap(o, w0, w1)
                if ov <= 0 or o.tid == r.tid:
                    continue
                who = ("server's " + names.get(o.tid, "fsync helper") if o.pid == spid
                       else "the client" if o.pid == cpid else "other processes")
                tot[f"{waiter} waited, {who} ran"] += ov * 1000
    return tot


def main(argv: list[str]) -> int:
    data = json.loads(Path(argv[0]).read_text())
    all_runs = runs(Path(argv[1]).read_text().splitlines())
    summary = data["summary"]
    spid, cpid = summary["serverPid"], summary["clientPid"]
    names = {int(k): v for k, v in summary["threads"].items()}
    by_tid: dict[int, list[Run]] = collections.defaultdict(list)
    for r in all_runs:
        by_tid[r.tid].append(r)
    server = {r.tid for r in all_runs if r.pid == spid}
    for which in ("checkpoints", "rewinds"):
        reqs = data[which][1:]  # the first of each: the server's first of its kind
        rows = [split(q, by_tid, server) for q in reqs]
        print(f"{which} ({len(rows)}):")
        for row in rows:
            row["thread"] = names.get(row["thread"], row["thread"])
            print("  " + json.dumps(row))
        for k in ("wall", "run", "queue", "disk", "sleep", "othersInSleep"):
            vals = [row[k] for row in rows]
            print(f"  {k}: median {statistics.median(vals):.2f}, "
                  f"range {min(vals):.2f}-{max(vals):.2f}")
        print(f"  gilSlices: {sum(row['gilSlices'] for row in rows)} in {len(rows)} requests")
        for k, v in holders(reqs, all_runs, spid, cpid, names).most_common():
            print(f"  {k}: {v:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
