"""Server start-up on an existing store against one fresh CLI no-op (issue 23's "one walk at
start"): the server started, initialized, a checkpoint asked at once (the start-up walk),
another 5 s later (warm: incremental, ≤ 50 ms wanted); and ``turnback checkpoint`` from a
fresh process with no server. Each package folder given (this checkout's ``server`` by
default; another commit's ``git archive REF server`` output, or a copy with a change) is run
in turn, ``--rounds`` times, interleaved with the CLI: the same machine load for all.

    python bench/probes/server/startup_walks.py WORKSPACE [PACKAGE_FOLDER[@VAR=VALUE] ...] \\
        [--rounds 3]

``--progress-delay MS``: the client declares ``window.workDoneProgress``, as the extension
does, and answers the server's requests (the first walk's progress token) MS ms after they
come (0: at once); without it the client declares no capability and is asked for nothing.

(``server@TURNBACK_START_WORKER=0``: this checkout's server without its start child;
``server@TURNBACK_START_WORKER=idle``: with it, but idle until the first walk, not started at
the fork on the store of the server's working folder, which is the workspace here.)
    # the watcher's set-up and the walk, both ways (own listing / walk lays):
    python bench/probes/server/startup_walks.py WORKSPACE --parts

The workspace must have a store already (two CLI checkpoints: the second records the folder
listings every later full scan trusts).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE))

from lsp_client import LspClient  # noqa: E402


def _code_env(spec: str) -> tuple[Path, dict[str, str]]:
    """``FOLDER[@VAR=VALUE]``: the package folder, and the variable set for its runs."""
    folder, _, var = spec.partition("@")
    extra = dict([var.split("=", 1)]) if var else {}
    return Path(folder).resolve(), extra


def _cpu(pid: int) -> float:
    """CPU seconds of a process and of its children it has reaped (its start child)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def server(ws: Path, spec: str, progress_delay: float | None = None,
           ) -> tuple[float, float, float, float, float]:
    """(initialized, + first checkpoint, in s; warm no-op 5 s later, in ms; load; CPU
    seconds up to the first checkpoint's answer, the start child's included).
    ``progress_delay``: seconds the client takes to answer the server's requests, having
    declared ``window.workDoneProgress``; None: no capability declared."""
    code, extra = _code_env(spec)
    env = {**os.environ, "PYTHONPATH": str(code), **extra}
    env.pop("TURNBACK_STORE", None)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    client = LspClient([sys.executable, "-m", "turnback.server"], cwd=ws, env=env,
                       answer_delay=progress_delay or 0.0)
    caps = None if progress_delay is None else {"window": {"workDoneProgress": True}}
    try:
        client.initialize(ws, caps)
        init = time.perf_counter() - t0
        client.request("turnback/createCheckpoint", {})
        first = time.perf_counter() - t0
        cpu = _cpu(client.proc.pid)
        time.sleep(5)  # the "5 s later"
        t1 = time.perf_counter()
        client.request("turnback/createCheckpoint", {})
        warm = (time.perf_counter() - t1) * 1000
    finally:
        client.close()
    return init, first, warm, load, cpu


def cli(ws: Path, code: Path) -> tuple[float, float, float]:
    """(seconds of a fresh ``turnback checkpoint`` with no server, load, CPU seconds)."""
    # no background server left by it (issue 16): it would walk the workspace at its own
    # start, on the cores the next round's server is timed on
    env = {**os.environ, "PYTHONPATH": str(code), "TURNBACK_BACKGROUND": "0"}
    env.pop("TURNBACK_STORE", None)
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "turnback.cli.main", "checkpoint", "-m", "bench"],
                   cwd=ws, env=env, check=True, capture_output=True)
    secs = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return secs, load, cpu


def parts(ws: Path, code: Path) -> None:
    """Where a server's start-up goes, in this process, both ways in turn: the inotify
    watcher laying its watches by its own listing, then a full scan without a pre-check
    (before); and the watcher laying only the top, the scan laying the rest as it lists
    each folder (``walk_lays``, the server's way since issue 23's third pass). Wall and
    CPU time of each part; watches held after."""
    sys.path.insert(0, str(code))
    from turnback import Store
    from turnback.server.watching.dirty import DirtyTracker
    from turnback.server.watching.inotify_watch import InotifyWatcher

    for walk_lays in (False, True):
        t0, c0 = time.perf_counter(), time.process_time()
        w = InotifyWatcher(ws, ws / ".turnback", DirtyTracker(), lambda s, c: None)
        w.walk_lays = walk_lays
        w.start()
        w.wait_ready(300)
        up, up_cpu = time.perf_counter() - t0, time.process_time() - c0
        try:
            with Store.open(ws) as store:
                hook = w.walk_hook()
                store.scanner.before_listing = hook
                t1, c1 = time.perf_counter(), time.process_time()
                store.scanner.scan(save_cache=False)
                walk, walk_cpu = time.perf_counter() - t1, time.process_time() - c1
                if hook is not None:
                    assert hook.done()
            watches = w.watch_count
        finally:
            w.stop()
        how = "walk lays the watches" if walk_lays else "watcher lists, then walk"
        print(f"{how}: watcher up {up:.2f} s (cpu {up_cpu:.2f}), full scan without a "
              f"pre-check {walk:.2f} s (cpu {walk_cpu:.2f}); in all {up + walk:.2f} s "
              f"(cpu {up_cpu + walk_cpu:.2f}); {watches:,} watches; load "
              f"{os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("code", nargs="*", default=[str(HERE.parent / "server")])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--progress-delay", type=float, default=None, metavar="MS",
                    help="declare window.workDoneProgress; answer the server's requests "
                         "after MS ms")
    ap.add_argument("--parts", action="store_true",
                    help="only time the watcher's set-up and the walk, in this process")
    a = ap.parse_args()
    ws = a.workspace.resolve()
    codes: list[str] = a.code
    if a.parts:
        for _ in range(a.rounds):
            parts(ws, _code_env(codes[0])[0])
        return
    got: dict[str, list[tuple[float, ...]]] = {}
    for r in range(a.rounds):
        for code in codes:
            row = server(ws, code, None if a.progress_delay is None
                         else a.progress_delay / 1000)
            got.setdefault(str(code), []).append(row)
            print(f"round {r + 1} {code}: initialized {row[0]:.2f} s, + first checkpoint "
                  f"{row[1]:.2f} s (CPU {row[4]:.2f} s); no-op 5 s later {row[2]:.1f} ms; "
                  f"load {row[3]:.1f}", flush=True)
        secs, load, cpu = cli(ws, _code_env(codes[0])[0])
        got.setdefault("cli", []).append((secs, load, cpu))
        print(f"round {r + 1} CLI no-op (no server): {secs:.2f} s (CPU {cpu:.2f} s); "
              f"load {load:.1f}", flush=True)
    print("\n| | initialized | + first checkpoint | its CPU | warm no-op 5 s later | load |\n"
          "|---|---:|---:|---:|---:|---:|")
    for code in codes:
        rows = got[str(code)]
        print(f"| server, {code} | {statistics.median(x[0] for x in rows):.2f} s | "
              f"{statistics.median(x[1] for x in rows):.2f} s | "
              f"{statistics.median(x[4] for x in rows):.2f} s | "
              f"{statistics.median(x[2] for x in rows):.1f} ms | "
              f"{min(x[3] for x in rows):.1f}–{max(x[3] for x in rows):.1f} |")
    rows = got["cli"]
    print(f"| fresh CLI no-op | | {statistics.median(x[0] for x in rows):.2f} s | "
          f"{statistics.median(x[2] for x in rows):.2f} s | | "
          f"{min(x[1] for x in rows):.1f}–{max(x[1] for x in rows):.1f} |")


if __name__ == "__main__":
    main()
