"""What starting the background server costs the CLI process, and the server to come up.

In one process with the store's modules loaded (as the CLI has them when it spawns, after
its own work), ``cli/background.py``'s ``wanted`` then ``start``, timed (wall and this
process's CPU); then until the server answers on its socket, and its CPU time then
(/proc); then SIGTERM and until it has left. The workspace needs a store:

    PYTHONPATH=server python bench/probes/server/background_spawn.py WORKSPACE [TIMES]
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path


def main() -> int:
    ws = os.path.realpath(sys.argv[1])
    times = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    root = os.path.join(ws, ".turnback")
    import turnback.store.facade  # noqa: F401  (what the CLI has loaded when it spawns)
    from turnback.cli import background
    from turnback.store import background_lock

    os.environ["TURNBACK_BACKGROUND"] = "1"
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)
    for _ in range(times):
        found = background.wanted(ws, root)
        if found is None:
            raise SystemExit(f"no background server may be started for {ws} (one runs?)")
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        background.start(found)
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        pid = _wait_answering(Path(root), background_lock.holder)
        ready = time.perf_counter() - t0
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        os.kill(pid, signal.SIGTERM)
        while background_lock.holder(Path(root)):
            time.sleep(0.01)
        own = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        print(f"start(): wall {1000 * (t1 - t0):.1f} ms, CPU {1000 * own:.1f} ms; server "
              f"answering after {ready:.2f} s, its CPU then {1000 * cpu:.0f} ms", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


def _wait_answering(root: Path, holder: Callable[[Path], int | None]) -> int:
    while True:
        pid = holder(root)
        if pid:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                try:
                    c.connect(str(root / "run" / "cli.sock"))
                    return int(pid)
                except OSError:
                    pass
        time.sleep(0.005)


if __name__ == "__main__":
    sys.exit(main())
