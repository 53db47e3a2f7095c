"""The workspace system calls of one rewind of 100 replaced files (4 folders), by strace:
whatever loads ``turnback`` (PYTHONPATH) is the code measured. A count, not a time: the
load does not move it. redteam30's fix must add none on a regular file's way.

    PYTHONPATH=server python bench/probes/rewind/redteam30_syscalls.py [scratch folder]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from strace_counts import CALLS, call_of, on_workspace, traced_step

from turnback import Store


def main() -> None:
    base = tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else None)
    try:
        ws = os.path.join(base, "ws")
        for i in range(100):
            os.makedirs(os.path.join(ws, f"d{i % 4}"), exist_ok=True)
            with open(os.path.join(ws, f"d{i % 4}", f"f{i}.txt"), "w") as f:
                f.write("v1\n")
        with Store.open(ws, create=True) as store:
            cp = store.checkpoint().id
        for i in range(100):
            with open(os.path.join(ws, f"d{i % 4}", f"f{i}.txt"), "w") as f:
                f.write("v2\n")
        step = f"s.rewind({cp!r})"
        counted: Counter[str] = Counter()
        for line in traced_step(base, ws, step, strace_args=["-e", f"trace={CALLS},write"]):
            if on_workspace(line, ws):
                counted[call_of(line)] += 1
        print(dict(sorted(counted.items())))
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
