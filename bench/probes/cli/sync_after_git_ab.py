"""A/B: a Turnback checkpoint (fresh ``Store.open``, one file changed) right after git's
``add -A`` and ``commit``, with and without ``os.sync()`` between; pairs alternated, the
load printed beside. Git syncs nothing there (2.39), Turnback's commit syncs once: without
the sync its ``fsync`` may wait for git's index and objects (``bench/run.py``'s flush).

    PYTHONPATH=server python bench/probes/cli/sync_after_git_ab.py SCRATCH_DIR [ROUNDS] [FILES]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from turnback import Store


def main() -> None:
    base = Path(tempfile.mkdtemp(dir=sys.argv[1]))
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    files = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
    try:
        ws = base / "ws"
        for i in range(files):
            d = ws / f"d{i % 100}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"f{i}.txt").write_text(f"{i}\n" * 20)
        env = dict(os.environ, GIT_DIR=str(base / "git"), GIT_WORK_TREE=str(ws))

        def git(*args: str) -> None:
            subprocess.run(["git", *args], env=env, check=True, capture_output=True)

        git("init", "-q")
        git("config", "gc.auto", "0")  # no detached gc in the rounds, nor under the clean-up
        (base / "git" / "info" / "exclude").write_text(".turnback\n")
        git("add", "-A")
        git("commit", "-qm", "0")
        with Store.open(ws, create=True) as store:
            store.checkpoint()
            store.checkpoint()
        took: dict[str, list[float]] = {"sync": [], "none": []}
        print("load before", os.getloadavg())
        for i in range(rounds):
            for mode in ("none", "sync") if i % 2 else ("sync", "none"):
                (ws / "d0" / "f0.txt").write_text(f"{i} {mode}\n")
                git("add", "-A")
                git("commit", "-qm", f"{i} {mode}")
                if mode == "sync":
                    os.sync()
                t0 = time.perf_counter()
                with Store.open(ws) as store:
                    store.checkpoint()
                took[mode].append((time.perf_counter() - t0) * 1000)
        for mode, ms in took.items():
            print(f"{mode}: median {statistics.median(ms):.1f} ms, min {min(ms):.1f}, "
                  f"n {len(ms)}")
        print("load after", os.getloadavg())
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
