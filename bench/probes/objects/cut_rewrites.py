"""What a log cut at ``packs.LOG_EAGER`` costs later writers in store growth (redteam19).

A server takes ``--server`` checkpoints in one process (one log, one frame a checkpoint),
each a one-line edit of one of ``--files`` files spread over 10 folders, round robin, then
closes. Then ``--hooks`` fresh processes each edit one file and take a checkpoint (a
whole scan, as an agent's hook does), with ``LOG_EAGER`` as shipped or ``--eager`` (a
number larger than any log: main before trust19). Printed: each hook's new log's bytes and
rows (objects it stored), and the sum. Counts and bytes do not depend on load.

    python bench/probes/objects/cut_rewrites.py --dir /work/benchdata/redteam19/cut --build \\
        --server 4500
    python bench/probes/objects/cut_rewrites.py --dir /work/benchdata/redteam19/cut --hooks 10 \\
        [--eager 1000000000] [--src /work/benchdata/redteam19/base/server]

Each ``--hooks`` run works on a copy of the built workspace (``<dir>/run``), removed after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
FOLDERS = 10


def _path(i: int, files: int) -> str:
    n = i % files
    return f"d{n % FOLDERS}/f{n}.txt"


def build(ws: Path, server: int, files: int) -> None:
    sys.path.insert(0, str(HERE.parent / "server"))
    from turnback import Store

    for i in range(files):
        p = ws / _path(i, files)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"file {i}\n" * 20)
    with Store.open(ws, create=True) as store:
        for i in range(server):
            p = _path(i, files)
            (ws / p).write_text(f"file {i % files} version {i}\n" * 20)
            store.checkpoint(label=f"s{i}", dirty=[p])


HOOK = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from turnback import Store
from turnback.objects import packs
if sys.argv[4] != "0":
    packs.LOG_EAGER = int(sys.argv[4])
ws = Path(sys.argv[2])
(ws / sys.argv[3]).write_text(f"hook edit of {sys.argv[3]}\\n")
with Store.open(ws) as s:
    s.checkpoint(label="hook")
"""


def hooks(ws: Path, count: int, files: int, eager: int, src: str) -> None:
    sys.path.insert(0, str(HERE.parent / "server"))
    from turnback.objects.packlog import frames
    from turnback.objects.packs import _ENTRY

    logs = ws / ".turnback" / "objects" / "log"
    total_bytes = total_rows = 0
    for i in range(count):
        before = set(logs.iterdir())
        subprocess.run([sys.executable, "-c", HOOK, src, str(ws),
                        _path(i * 7 + 3, files), str(eager)], check=True)
        new = sorted(set(logs.iterdir()) - before)
        size = rows = 0
        for log in new:
            size += log.stat().st_size
            fd = os.open(log, os.O_RDONLY)
            try:
                found, _ = frames(fd, 0, log.stat().st_size)
            finally:
                os.close(fd)
            rows += sum(len(f.rows) // _ENTRY.size for f in found)
        total_bytes += size
        total_rows += rows
        print(f"hook {i}: {len(new)} log(s), {size} bytes, {rows} objects stored")
    print(f"total: {total_bytes} bytes, {total_rows} objects in {count} hooks "
          f"(eager {'as shipped' if eager == 0 else eager})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--server", type=int, default=4500)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--hooks", type=int, default=0)
    ap.add_argument("--eager", type=int, default=0)
    ap.add_argument("--src", default=str(HERE.parent / "server"),
                    help="the hooks' turnback: another commit's server/ (git archive REF server)")
    args = ap.parse_args()
    ws = args.dir / "ws"
    if args.build:
        ws.mkdir(parents=True, exist_ok=True)
        build(ws, args.server, args.files)
    if args.hooks:
        run = args.dir / "run"
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(ws, run, symlinks=True)
        try:
            hooks(run, args.hooks, args.files, args.eager, args.src)
        finally:
            shutil.rmtree(run, ignore_errors=True)


if __name__ == "__main__":
    main()
