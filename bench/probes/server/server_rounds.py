"""The server's four request figures in a few rounds, for A/B runs of two commits.

Starts the server on ``--workspace`` (its store: the workspace's ``.turnback``, made by a
first checkpoint if missing), then per round: 10 files edited and a checkpoint asked at
once; 10 more edited and a rewind to it asked at once; a no-op checkpoint after 0.3 s;
10 edited, 0.4 s of quiet (the server reads them ahead), a rewind. Prints the medians
with the load average. Far shorter than ``run.py`` (no git, no first checkpoint when the
store exists), so two commits can be interleaved on a shared machine:

    python bench/probes/server/server_rounds.py --workspace bench/work/ws --rounds 8 --ref d8084f2
    # the work tree
    python bench/probes/server/server_rounds.py --workspace bench/work/ws --rounds 8

A ref's store format must match the store's (use a copy of the workspace otherwise).
``cpuMs`` is the server's CPU time (every thread's, from ``/proc/<pid>/task/*/schedstat``)
from each request's sending to its answer: steadier than wall time on a shared machine
(Linux only; a thread that ends meanwhile, an fsync helper, is not counted).
``loopCpuMs`` is the part of it on the event loop's thread, for both at-once requests (the
main thread: reading, decoding and dispatching the request, the hand-overs to the write
thread and back, writing the answer); the rest is the write threads' (the store's call,
and the stat cache's save that starts once the answer is written, often before this client
has read it).
``--spy FILE`` records the server with py-spy meanwhile (``bench/probes/cli/pyspy_top.py FILE``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from server_bench import arguments, cpu_ns, started


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__, rounds=8)
    ap.add_argument("--spy", type=Path, default=None)
    a = ap.parse_args(argv)
    tb, ed, pid = started(a)
    spy = None
    if a.spy is not None:
        exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        spy = subprocess.Popen([exe, "record", "-r", "1000", "-f", "raw", "-o", str(a.spy),
                                "-p", str(pid), "--threads"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
    s: dict[str, list[float]] = {"checkpointAtOnce": [], "rewindAtOnce": [], "noop": [],
                                 "rewindPrepared": []}
    cpu: dict[str, list[float]] = {"checkpointAtOnce": [], "rewindAtOnce": []}
    loop_cpu: dict[str, list[float]] = {"checkpointAtOnce": [], "rewindAtOnce": []}
    try:
        for i in range(a.rounds):
            ed.edit(10)
            c0, m0 = cpu_ns(pid), cpu_ns(pid, only=pid)
            secs, cp = tb.checkpoint_server(f"at once {i}")
            cpu["checkpointAtOnce"].append((cpu_ns(pid) - c0) / 1e9)
            loop_cpu["checkpointAtOnce"].append((cpu_ns(pid, only=pid) - m0) / 1e9)
            s["checkpointAtOnce"].append(secs)
            ed.edit(10)
            c0, m0 = cpu_ns(pid), cpu_ns(pid, only=pid)
            s["rewindAtOnce"].append(tb.rewind_server(cp)[0])
            cpu["rewindAtOnce"].append((cpu_ns(pid) - c0) / 1e9)
            loop_cpu["rewindAtOnce"].append((cpu_ns(pid, only=pid) - m0) / 1e9)
            time.sleep(0.3)
            secs, cp = tb.checkpoint_server(f"no-op {i}")
            s["noop"].append(secs)
            ed.edit(10)
            time.sleep(0.4)
            s["rewindPrepared"].append(tb.rewind_server(cp)[0])
            time.sleep(0.3)
    finally:
        if spy is not None:
            spy.send_signal(2)
            spy.wait()
        tb.stop_server()
    out = {k: round(statistics.median(v) * 1000, 1) for k, v in s.items()}
    used = {k: round(statistics.median(v) * 1000, 2) for k, v in cpu.items() if v}
    on_loop = {k: round(statistics.median(v) * 1000, 2) for k, v in loop_cpu.items() if v}
    print(json.dumps({"ref": a.ref or "work tree", "load": round(os.getloadavg()[0], 2),
                      "medianMs": out, "cpuMs": used, "loopCpuMs": on_loop}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
