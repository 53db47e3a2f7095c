"""How long ``Store.checkpoint_now`` holds its caller (the server's event loop, where a
held call freezes every folder's requests) in three cases redteam23 found, for A/B runs of
two trees (PYTHONPATH picks which ``turnback`` is measured):

- ``sesslock``: another process holds the workspace session's file lock;
- ``gc``: a gc by another process since the last scan, a workspace of N files;
- ``rewind``: a rewind of N files just done (its paths still to look at again).

Usage: redteam23_loophold.py CASE [N] [--scratch DIR]; scratch data is removed after."""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

import turnback
from turnback import Store
from turnback.store.session_ops import WORKSPACE_SESSION


def _files(ws: Path, n: int, text: str) -> None:
    for d in range(n // 100):
        (ws / f"d{d}").mkdir(exist_ok=True)
        for i in range(100):
            (ws / f"d{d}" / f"f{i}.txt").write_text(f"{text} {d} {i}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["sesslock", "gc", "rewind"])
    ap.add_argument("n", type=int, nargs="?", default=1000)
    ap.add_argument("--scratch", default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(dir=args.scratch))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        _files(ws, args.n, "file")
        (ws / "x.txt").write_text("x\n")
        with Store.open(ws, create=True) as store:
            first = store.checkpoint()
            lock_fd = -1
            if args.case == "gc":
                (ws / "x.txt").write_text("x2\n")
                store.checkpoint(dirty={"x.txt"})
                with Store.open(ws) as other:
                    other.gc(keep_last=1)
            elif args.case == "rewind":
                _files(ws, args.n, "changed")
                store.checkpoint()
                store.rewind(first.id)
                store.save_scan_cache()
            else:
                lock = str(store.backend.path(WORKSPACE_SESSION)) + ".lock"  # type: ignore[attr-defined]
                lock_fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(lock_fd, fcntl.LOCK_EX)  # another open file description
            (ws / "x.txt").write_text("x3\n")
            t = time.perf_counter()
            try:
                got = store.checkpoint_now({"x.txt"})
                out = "declined" if got is None else "checkpoint taken"
            except Exception as exc:  # base's session lock case: Conflict after 30 s
                out = f"{type(exc).__name__}"
            held = time.perf_counter() - t
            if lock_fd >= 0:
                os.close(lock_fd)
            tree = turnback.__file__.split("/server/")[0]
            print(f"{args.case} N={args.n} {tree}: loop held {held * 1000:.1f} ms -> {out}; "
                  f"checkpoints {len(store.checkpoints())}; load {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
