"""Server start → first ``turnback/sessions`` answer with a cold page cache (issue 16's row).

Drops the kernel's page cache (``/proc/sys/vm/drop_caches``: root only; it slows every
process on the machine for a moment, so run it sparingly), then starts the server on an
existing store of ``bench/run_sessions.py`` and times its first answer and, when that was
partial, the full answer after the listing's ``turnback/didChange``. One start a run: call
it in turns with ``--ref`` for an A/B.

    python bench/probes/sessions/sessions_cold_start.py /work/benchdata/sess16b/sessions-ws \\
        [--ref REF]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
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
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args(argv)
    commit = turnback_side.use_ref(a.ref, HERE / "work") if a.ref else "working tree"
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")
    load = os.getloadavg()
    client, times = start(a.workspace.resolve(), a.python)
    client.close()
    print(json.dumps({"commit": commit, "loadBefore": load, "loadAfter": os.getloadavg(),
                      **times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
