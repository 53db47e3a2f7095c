"""What N storing checkpoints by fresh processes since the last gc cost the next fresh process
(issue 16, branch ``logs16``): the object logs they leave, ``Store.open``'s CPU, a fresh
``turnback checkpoint`` no-op's CPU, and what the merge costs the process that does it.

    # the store after N hooks
    python bench/probes/objects/log_pileup.py build SCRATCH N [--src BASE/server]
    python bench/probes/objects/log_pileup.py measure SCRATCH N --rounds R --src A/server --src \\
        B/server
    # N real CLI processes
    python bench/probes/objects/log_pileup.py cli SCRATCH N [--src BASE/server]

``build``: a 50-file workspace (as in bench/RESULTS.md, "the merged head after format 3"),
one first checkpoint, then N checkpoints of 3 edited files, each by a new ``Store`` (a new
object log, as a new process makes) that then does what the CLI does after printing
(``Store.merge_logs``, where the source has it); prints the logs and packs left and each
merge's CPU and wall time. The store is ``SCRATCH/<side>-<N>``, one per source (a store
written by one source is never opened by the other). ``measure``: fresh processes, the
sources alternating round by round, each timing ``Store.open`` (CPU, after the imports)
and then a ``turnback checkpoint`` no-op (the process's CPU, ``RUSAGE_CHILDREN``), with the
load average before and after. ``cli``: the same N checkpoints by real ``turnback
checkpoint`` processes, the logs counted after each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
BRANCH = HERE.parent / "server"


def side_name(src: Path) -> str:
    return "branch" if src.resolve() == BRANCH.resolve() else src.resolve().parent.name


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def edit(ws: Path, tag: str, n: int = 3) -> None:
    for i in range(n):
        p = ws / f"d{i % 5}" / f"f{i}.txt"
        p.write_text(f"{tag} {i}\n" * 20)
        os.utime(p, (time.time() - 10, time.time() - 10))  # not "just written": no re-read


def make_ws(ws: Path) -> None:
    for i in range(50):
        p = ws / f"d{i % 5}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"file {i}\n" * 20)
        os.utime(p, (time.time() - 10, time.time() - 10))


def counts(ws: Path) -> tuple[int, int]:
    objects = ws / ".turnback" / "objects"
    logs = [n for n in os.listdir(objects / "log")] if (objects / "log").exists() else []
    packs = [n for n in os.listdir(objects / "pack") if n.endswith(".idx")]
    return len(logs), len(packs)


def build(scratch: Path, n: int, src: Path) -> None:
    sys.path.insert(0, str(src))
    from turnback import Store

    ws = scratch / f"{side_name(src)}-{n}"
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    make_ws(ws)
    Store.open(ws).checkpoint(label="first")
    merges = []
    most = 0
    for i in range(n):
        edit(ws, f"hook {i}")
        store = Store.open(ws)
        store.checkpoint(label=f"hook {i}", auto=True)
        store.close()
        if hasattr(store, "merge_logs"):
            c0, w0 = time.process_time(), time.perf_counter()
            done = store.merge_logs()
            c1, w1 = time.process_time(), time.perf_counter()
            if done is not None:
                merges.append({"logs": done[0], "packs": done[1],
                               "cpuMs": round((c1 - c0) * 1000, 2),
                               "wallMs": round((w1 - w0) * 1000, 2)})
        most = max(most, counts(ws)[0])
    logs, packs = counts(ws)
    out = {"side": side_name(src), "n": n, "logs": logs, "packs": packs, "mostLogs": most,
           "merges": len(merges)}
    if merges:
        cpu = [m["cpuMs"] for m in merges]
        wall = [m["wallMs"] for m in merges]
        def spread(xs: list[float]) -> dict[str, float]:
            q = statistics.quantiles(xs, n=20) if len(xs) > 1 else xs * 19
            return {"median": round(statistics.median(xs), 2), "p95": round(q[18], 2),
                    "max": max(xs), "over100": sum(x > 100 for x in xs)}

        out |= {"mergeCpuMs": spread(cpu), "mergeWallMs": spread(wall),
                "packsFolded": sorted({m["packs"] for m in merges})}
    print(json.dumps(out))


_OPEN = """
import sys, time, os
sys.path.insert(0, sys.argv[1])
from turnback import Store
c0 = time.process_time(); w0 = time.perf_counter()
s = Store.open(sys.argv[2], create=False)
c1 = time.process_time(); w1 = time.perf_counter()
s.close()
print((c1 - c0) * 1000, (w1 - w0) * 1000)
"""


def measure(scratch: Path, n: int, srcs: list[Path], rounds: int) -> None:
    res: dict[str, dict[str, list[float]]] = {}
    print(f"load before: {loadavg()}", file=sys.stderr)
    for r in range(rounds):
        order = srcs if r % 2 == 0 else list(reversed(srcs))
        for src in order:
            side = side_name(src)
            ws = scratch / f"{side}-{n}"
            env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
            env |= {"PYTHONPATH": str(src), "TURNBACK_BACKGROUND": "0"}
            out = subprocess.run([sys.executable, "-c", _OPEN, str(src), str(ws)],
                                 capture_output=True, text=True, check=True, env=env).stdout
            cpu, wall = (float(x) for x in out.split())
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            w0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "turnback.cli.main", "-C", str(ws),
                            "checkpoint", "-m", "noop"], capture_output=True, check=True,
                           env=env)
            w1 = time.perf_counter()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            d = res.setdefault(side, {"openCpuMs": [], "openWallMs": [], "noopCpuMs": [],
                                      "noopWallMs": []})
            d["openCpuMs"].append(cpu)
            d["openWallMs"].append(wall)
            d["noopCpuMs"].append((after.ru_utime + after.ru_stime - before.ru_utime
                                   - before.ru_stime) * 1000)
            d["noopWallMs"].append((w1 - w0) * 1000)
    print(f"load after: {loadavg()}", file=sys.stderr)
    for side, d in res.items():
        ws = scratch / f"{side}-{n}"
        logs, packs = counts(ws)
        print(json.dumps({"side": side, "n": n, "logs": logs, "packs": packs,
                          **{k: round(statistics.median(v), 2) for k, v in d.items()}}))


def cli(scratch: Path, n: int, src: Path) -> None:
    ws = scratch / f"cli-{side_name(src)}-{n}"
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    make_ws(ws)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")}
    env |= {"PYTHONPATH": str(src), "TURNBACK_BACKGROUND": "0"}
    seen = []
    merging: list[tuple[float, float]] = []  # (CPU, wall) ms of the calls that merged
    plain: list[tuple[float, float]] = []
    print(f"load before: {loadavg()}", file=sys.stderr)
    for i in range(n + 1):
        if i:
            edit(ws, f"hook {i}")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "turnback.cli.main", "-C", str(ws), "checkpoint",
                        "--auto", "-m", f"hook {i}"], capture_output=True, check=True, env=env)
        w1 = time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
        now = counts(ws)[0]
        if i:
            (merging if seen and now < seen[-1] else plain).append((cpu, (w1 - w0) * 1000))
        seen.append(now)
    print(f"load after: {loadavg()}", file=sys.stderr)
    out: dict[str, object] = {"side": side_name(src), "n": n, "logsAfterEach": seen,
                              "mostLogs": max(seen), "logs": seen[-1], "packs": counts(ws)[1]}
    for name, calls in (("merging", merging), ("plain", plain)):
        if calls:
            out[name] = {"calls": len(calls),
                         "cpuMs": round(statistics.median(c for c, _ in calls), 1),
                         "wallMs": round(statistics.median(w for _, w in calls), 1)}
    print(json.dumps(out))
    shutil.rmtree(ws)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["build", "measure", "cli"])
    ap.add_argument("scratch", type=Path)
    ap.add_argument("n", type=int)
    ap.add_argument("--src", type=Path, action="append", default=[])
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    srcs = a.src or [BRANCH]
    if a.what == "build":
        build(a.scratch, a.n, srcs[0])
    elif a.what == "measure":
        measure(a.scratch, a.n, srcs, a.rounds)
    else:
        cli(a.scratch, a.n, srcs[0])


if __name__ == "__main__":
    main()
