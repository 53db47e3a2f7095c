"""The cyclic collections and pack block decodes inside each at-once request of a run.

``bench/probes/server/wall_hook/sitecustomize.py`` logs them (``WALL_GC_LOG=PREFIX``) from the
server of a ``bench/probes/server/wall_threads.py --json RUN.json`` run; this places them in its
requests' windows:

    WALL_GC_LOG=/abs/PREFIX BENCH_QUIET_SERVER=1 \\
        PYTHONPATH=bench/probes/server/wall_hook:/abs/server \\
        python bench/probes/server/wall_threads.py --workspace WS --rounds 30 --json RUN.json
    python bench/probes/server/wall_events.py RUN.json /abs/PREFIX
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def lines(path: Path) -> list[list[int]]:
    if not path.exists():
        return []
    return [[int(x) for x in line.split()] for line in path.read_text().splitlines()]


def main(argv: list[str]) -> int:
    data = json.loads(Path(argv[0]).read_text())
    pid = data["summary"]["serverPid"]
    collections = lines(Path(f"{argv[1]}.{pid}"))
    decodes = lines(Path(f"{argv[1]}.dec.{pid}"))
    for which in ("checkpoints", "rewinds"):
        print(f"{which} (the first left out):")
        for req in sorted(data[which][1:], key=lambda r: r["loopCpu"]):
            a, b = req["monotonic"]
            gcs = [e for e in collections if e[1] > a and e[0] < b]
            dec = [e for e in decodes if e[1] > a and e[0] < b]
            print(f"  wall {req['wall']:7.2f}  loopCpu {req['loopCpu']:5.2f}  "
                  f"queue {req['loopQueue']:5.2f}  collections {len(gcs)} "
                  f"(gen {max((e[3] for e in gcs), default='-')}, "
                  f"{sum(e[1] - e[0] for e in gcs) / 1e6:.2f} ms)  block decodes {len(dec)} "
                  f"({sum(e[1] - e[0] for e in dec) / 1e6:.2f} ms, "
                  f"{sum(e[3] for e in dec) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
