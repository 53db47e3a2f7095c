"""Server start on a store that was never listed: first answer, full answer, CPU (issue 16).

Removes the store's ``index/`` (no summary index, no ``first.json``, no accumulators:
a store written by an older version, just pulled, or whose ``index/`` was deleted), then
starts the server on a store made by ``bench/run_sessions.py`` and times, from the
server's start: ``initialize``, the first ``turnback/sessions`` answer (offset 0, limit
200, as the extension asks), and when that was partial the full answer after the
listing's ``turnback/didChange``; with the server's CPU at each and the load average
before and after. The full listing writes ``index/`` again: each run removes it first.
One start a run; call it in turns with ``--ref`` for an A/B.

    python bench/probes/sessions/sessions_never_listed.py /work/benchdata/sess16c/sessions-ws \
        [--ref REF] [--src /work/benchdata/sess16c/src] [--cold] [--first-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
import turnback_side
from run_sessions import start

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--ref", default=None)
    ap.add_argument("--src", type=Path, default=HERE / "work",
                    help="where --ref's copy of the package goes")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cold", action="store_true",
                    help="drop the kernel's page cache first (root; slows every process on "
                         "the machine for a moment: sparingly)")
    ap.add_argument("--first-only", action="store_true",
                    help="stop the server after the first answer (no full listing waited for)")
    a = ap.parse_args(argv)
    commit = turnback_side.use_ref(a.ref, a.src) if a.ref else "working tree"
    ws = a.workspace.resolve()
    shutil.rmtree(ws / ".turnback" / "index", ignore_errors=True)
    if a.cold:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    load = os.getloadavg()
    t0 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    client, times = start(ws, a.python, full=not a.first_only)
    client.close()
    print(json.dumps({"commit": commit, "at": t0, "cold": a.cold, "loadBefore": load,
                      "loadAfter": os.getloadavg(), **times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
