"""What writing a refreshed session's counts (``Store.save_session_counts``) costs, for two
versions of the code: the kept listing's refresh calls it at every change an agent makes.

Each child process makes a fresh store of ``--sessions`` sessions (listed once, so the
index is on disk), then ``--calls`` times appends one event to each of ``--refresh``
sessions, summarizes them and times the one ``save_session_counts`` call (wall and CPU
time). The parent runs one child per version in alternating order, ``--rounds`` times,
and prints the medians of each version with the load average before and after.

    python bench/probes/sessions/save_counts.py --base /path/to/base/server --branch server \\
        --dir /work/benchdata/x --sessions 1000 --refresh 1 --calls 200 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def child(args: argparse.Namespace) -> None:
    from turnback import Kind, Store

    ws = Path(args.dir) / f"ws-{os.getpid()}"
    shutil.rmtree(ws, ignore_errors=True)
    ws.mkdir(parents=True)
    try:
        with Store.open(ws, create=True) as store:
            ids = [f"s{i:05d}" for i in range(args.sessions)]
            for sid in ids:
                store.start_session(title=sid, agent="codex", session_id=sid)
                store.append(sid, Kind.PROMPT, {"text": "x"})
            store.sessions()
            wall, cpu = [], []
            for n in range(args.calls):
                some = {ids[(n * args.refresh + k) % len(ids)] for k in range(args.refresh)}
                for sid in some:
                    store.append(sid, Kind.PROMPT, {"text": "more"})
                    store.session_summary(sid)
                w, c = time.perf_counter(), time.process_time()
                store.save_session_counts(some)
                cpu.append(time.process_time() - c)
                wall.append(time.perf_counter() - w)
        print(json.dumps({"wall_us": statistics.median(wall) * 1e6,
                          "cpu_us": statistics.median(cpu) * 1e6}))
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base")
    ap.add_argument("--branch")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--refresh", type=int, default=1)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    versions = {"base": args.base, "branch": args.branch}
    got: dict[str, list[dict[str, float]]] = {k: [] for k in versions}
    load_before = Path("/proc/loadavg").read_text().strip()
    for r in range(args.rounds):
        order = list(versions) if r % 2 == 0 else list(reversed(versions))
        for name in order:
            env = {**os.environ, "PYTHONPATH": str(Path(versions[name]).resolve())}
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--dir", args.dir,
                 "--sessions", str(args.sessions), "--refresh", str(args.refresh),
                 "--calls", str(args.calls)], env=env, check=True, capture_output=True,
                text=True).stdout
            got[name].append(json.loads(out))
    for name, runs in got.items():
        print(name, {k: round(statistics.median(r[k] for r in runs), 1)
                     for k in ("wall_us", "cpu_us")}, "runs:", [round(r["cpu_us"]) for r in runs])
    print("load before:", load_before, "after:", Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    main()
