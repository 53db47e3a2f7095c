"""What one session event append costs in one process: ``Store.append`` of a small event,
as the server's follower and the hooks make one per tool call.

Opens (or makes) the store of ``--workspace``, starts a session, then appends
``--events`` events in rounds of 100 and prints the medians of a round's CPU and wall
time per event, with the load average before and after. Each round is marked by an
``access("/@@append")`` call, so ``strace -f -c`` (or ``-o``) over the run counts the
system calls of the appends (divide by ``--events``).

    python bench/probes/sessions/session_appends.py --workspace /work/benchdata/trust17/ws5k \\
        --src <server/>
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
# ``--src DIR``: the package from another commit's ``server/`` (``git archive REF server``)
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))

from turnback import Kind  # noqa: E402
from turnback.store.facade import Store  # noqa: E402

ROUND = 100


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--src", default=None, help="a server/ folder to import turnback from")
    args = ap.parse_args()
    load = Path("/proc/loadavg").read_text().split()[0]
    cpu: list[float] = []
    wall: list[float] = []
    with Store.open(args.workspace) as store:
        sid = store.start_session(title="bench", agent="bench").id
        for _ in range(args.events // ROUND):
            try:
                os.access("/@@append", os.F_OK)  # the trace's marker
            except OSError:
                pass
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(ROUND):
                store.append(sid, Kind.TOOL_CALL, {"name": "Bash", "input": {"cmd": "ls"}})
            cpu.append((time.process_time() - c0) / ROUND * 1e6)
            wall.append((time.perf_counter() - w0) / ROUND * 1e6)
    after = Path("/proc/loadavg").read_text().split()[0]
    print(f"append: cpu median {statistics.median(cpu):.1f} us, wall median "
          f"{statistics.median(wall):.1f} us per event ({len(cpu)} rounds of {ROUND}; "
          f"load {load} -> {after}; src {_SRC or 'this tree'})")


if __name__ == "__main__":
    main()
