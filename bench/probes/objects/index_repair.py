"""What mending a damaged ``checkpoints.jsonl`` from the object logs costs (trust18).

A store of N checkpoints taken by one process (one object log, N frames: a server's that
no merge has folded yet, the most a repair can have to read). Each measure runs in a fresh
process and prints its CPU time (``time.process_time``), median of ``--repeat``, with the
load average before and after:

- ``open``: ``Store.open`` and ``close``, the file undamaged;
- ``list``: ``Store.open``, ``checkpoints()`` (the whole file read), ``close``, undamaged;
- ``damaged``: the same listing with a line in the file's middle zeroed: the listing's
  repair reads the log whole and puts the record back (the file is restored after);
- ``merge``: ``merge_logs(at_least=0)`` on a copy of the store (the merge reads each log
  whole since trust18).
- ``reopen`` (redteam17): a line in the file's last 64 KiB zeroed and left there, one open
  (the repair, untimed), then the open of a later process, timed: the damaged line stays in
  the append-only file;
- ``relist`` (redteam17): the same with a middle line and a listing (open + ``checkpoints()``).

``--src DIR`` imports ``turnback`` from another commit's ``server/`` (``git archive REF
server``) for A/B runs; ``--build`` makes the store first (slow: N checkpoints):

    python bench/probes/objects/index_repair.py --dir /work/benchdata/trust18/repair \\
        --checkpoints 10000 --build
    python bench/probes/objects/index_repair.py --dir … --measure list [--src base/server]
    # a copy, its logs merged
    python bench/probes/objects/index_repair.py --dir …/hooks --build-hooks 17
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def _import(src: str | None) -> None:
    sys.path.insert(0, src or str(HERE.parent / "server"))


def build(ws: Path, n: int) -> None:
    from turnback import Store

    ws.mkdir(parents=True, exist_ok=True)
    with Store.open(ws, create=True) as store:
        for i in range(n):
            (ws / "a.txt").write_text(f"version {i}\n")
            store.checkpoint(label=f"v{i}", dirty=["a.txt"])


def build_hooks(ws: Path, hooks: int) -> None:
    """The store's logs merged, then ``hooks`` processes that each take one checkpoint (one
    one-frame log each): what a merge after a run of agent hooks finds."""
    from turnback import Store

    with Store.open(ws) as store:
        store.merge_logs(at_least=0)
    for i in range(hooks):
        subprocess.run([sys.executable, "-c", (
            "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
            "from turnback import Store; ws = Path(sys.argv[2]); "
            "(ws / 'a.txt').write_text(f'hook {sys.argv[3]}\\n'); "
            "s = Store.open(ws); s.checkpoint(label='hook', dirty=['a.txt']); s.close()"),
            sys.path[0], str(ws), str(i)], check=True)


def _zero_middle(index: Path, at_end: bool = False) -> bytes:
    data = index.read_bytes()
    lines = data.splitlines(keepends=True)
    at = len(lines) - 5 if at_end else len(lines) // 2
    lines[at] = b"\0" * (len(lines[at]) - 1) + b"\n"
    index.write_bytes(b"".join(lines))
    return data


def measure(ws: Path, what: str) -> float:
    from turnback import Store

    index = ws / ".turnback" / "checkpoints.jsonl"
    if what == "merge":
        copy = ws.parent / "merge-copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(ws, copy, symlinks=True)
        ws = copy
    saved = (_zero_middle(index, at_end=what == "reopen")
             if what in ("damaged", "reopen", "relist") else None)
    mark = ws / ".turnback" / "cache" / "index-mended"
    try:
        if what in ("reopen", "relist"):
            mark.unlink(missing_ok=True)
            with Store.open(ws) as first:  # the repair, made by an earlier process
                first.checkpoints()
        t0 = time.process_time()
        store = Store.open(ws)
        if what in ("list", "damaged", "relist"):
            store.checkpoints()
        if what == "merge":
            store.merge_logs(at_least=0)
        store.close()
        spent = time.process_time() - t0
        if what == "damaged":
            repaired = getattr(store.index, "repaired", None)
            assert repaired in (None, 1), repaired
    finally:
        if saved is not None:
            index.write_bytes(saved)
            mark.unlink(missing_ok=True)
        if what == "merge":
            shutil.rmtree(ws)
    return spent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--checkpoints", type=int, default=10_000)
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--build-hooks", type=int, default=0, metavar="N",
                    help="merge the logs, then N processes of one checkpoint each")
    ap.add_argument("--measure", choices=["open", "list", "damaged", "merge", "reopen", "relist"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--src", default=None)
    ap.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    _import(a.src)
    ws = a.dir / "ws"
    if a.build:
        build(ws, a.checkpoints)
    if a.build_hooks:
        build_hooks(ws, a.build_hooks)
    if a.measure is None:
        return 0
    if a.once:
        print(f"{measure(ws, a.measure) * 1000:.2f}")
        return 0
    load0 = Path("/proc/loadavg").read_text().split()[0]
    runs = []
    for _ in range(a.repeat):
        cmd = [sys.executable, __file__, "--dir", str(a.dir), "--measure", a.measure, "--once"]
        if a.src:
            cmd += ["--src", a.src]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                             env={**os.environ, "TURNBACK_BACKGROUND": "0"}).stdout
        runs.append(float(out.split()[-1]))
    load1 = Path("/proc/loadavg").read_text().split()[0]
    print(f"{a.measure} {a.src or 'branch'}: median {statistics.median(runs):.2f} ms CPU "
          f"(runs {', '.join(f'{r:.2f}' for r in runs)}), load {load0} -> {load1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
