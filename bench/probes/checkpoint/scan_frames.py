"""The scan's deepest stack, in frames below its caller, over a tree of ``MAX_SCAN_DEPTH``
nested folders (files at four levels): three full walks (the third reuses the folders'
records) and the at-once scan of the bottom file. A count, not a time: load does not move it.

    PYTHONPATH=server python bench/probes/checkpoint/scan_frames.py SCRATCH_DIR
"""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

from turnback import Store
from turnback.snapshot.scan import MAX_SCAN_DEPTH


def _age(root: Path) -> None:
    """Files' mtimes 10 s back, so the stat cache trusts them (its racy-clean rule)."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            t = os.lstat(p).st_mtime - 10
            os.utime(p, (t, t))


def main() -> None:
    base = Path(tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else None))
    try:
        ws = base / "ws"
        rel = "/".join(["d"] * MAX_SCAN_DEPTH)
        os.makedirs(ws / rel)
        for level in (1, 100, MAX_SCAN_DEPTH - 1, MAX_SCAN_DEPTH):
            (ws / "/".join(["d"] * level) / "f.txt").write_text(f"{level}\n")
        _age(ws)
        sys.setrecursionlimit(5000)  # room to count a walk that would overrun 1,000
        deepest = 0

        def prof(frame: FrameType, event: str, _arg: Any) -> None:
            nonlocal deepest
            if event == "call":
                n, f = 0, frame
                while f is not None:
                    n, f = n + 1, f.f_back
                deepest = max(deepest, n)

        with Store.open(ws, create=True) as store:
            for label in ("full 1", "full 2", "full 3 (records reused)", "at once"):
                if label == "at once":
                    (ws / rel / "f.txt").write_text("changed\n")
                start, deepest = len(inspect.stack(0)), 0
                sys.setprofile(prof)
                try:
                    if label == "at once":
                        store.checkpoint(dirty=[f"{rel}/f.txt"])
                    else:
                        store.checkpoint()
                finally:
                    sys.setprofile(None)
                below = deepest - start
                print(f"{label}: {below} frames below the caller, "
                      f"{below / MAX_SCAN_DEPTH:.2f} a folder")
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
