"""A fresh CLI rewind with no server (``turnback rewind CP``, ``TURNBACK_BACKGROUND=0``)
against shadow git's restore (``clean -fdq`` + ``reset -q --hard``), variants and git
alternated, as ``run.py``'s row "rewind of 10 changed files (cold CLI, no server)".

Each variant is a package folder (a byte-compiled ``git archive`` copy's ``server``), its own
copy of one generated workspace with a store (its checkpoint ``CP`` as the target) and, for
``--git``, the shadow repository of one copy (``<copy>.shadow.git``, HEAD the same content).
Per round and side: 10 files edited (``edits.Editor``, the same seed for every side), the
disk written back (``os.sync``, as ``run.py``'s ``flush_disk``), the call timed, the
files checked back. Prints medians and the load before and after:

    python bench/probes/cli/fresh_rewind_ab.py --rounds 8 --git WS_A base=SRC_A/server:WS_A:CP_A \\
        head=SRC_B/server:WS_B:CP_B
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE))

from edits import Editor  # noqa: E402

TURNBACK = str(Path(sys.executable).with_name("turnback"))


def timed(cmds: list[list[str]], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    for c in cmds:
        subprocess.run(c, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--git", type=Path, required=True, help="the copy with a shadow git")
    ap.add_argument("variant", nargs="+", help="NAME=PACKAGE_FOLDER:WORKSPACE:CHECKPOINT")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TURNBACK_BACKGROUND"] = "0"
    sides: list[tuple[str, str, Path, str]] = []
    for v in a.variant:
        name, rest = v.split("=", 1)
        src, ws, cp = rest.split(":", 2)
        sides.append((name, src, Path(ws), cp))
    git_dir = f"{a.git}.shadow.git"
    g = ["git", f"--git-dir={git_dir}", f"--work-tree={a.git}"]
    head = subprocess.run([*g, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    order: list[tuple[str, str, Path, str] | None] = [*sides, None]
    got: dict[str, list[float]] = {}
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for i in range(a.rounds):
        for side in order if i % 2 == 0 else order[::-1]:
            ws = a.git if side is None else side[2]
            before = {p: (ws / p).read_bytes() for p in Editor(ws, seed=1000 + i).edit(10)}
            os.sync()
            if side is None:
                ms = timed([[*g, "clean", "-fdq"], [*g, "reset", "-q", "--hard", head]],
                           dict(os.environ))
                name = "git"
            else:
                name, src, _ws, cp = side
                ms = timed([[sys.executable, TURNBACK, "-C", str(ws), "rewind", cp]],
                           dict(env, PYTHONPATH=src))
            for p, edited in before.items():
                if (ws / p).read_bytes() == edited:
                    raise SystemExit(f"{name} did not rewind {p}")
            got.setdefault(name, []).append(ms)
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "load", load0, "->", load1,
          f"{a.rounds} rounds")
    git = statistics.median(got["git"])
    for name, xs in got.items():
        m = statistics.median(xs)
        print(f"{name:8s} wall median {m:7.1f} ms  min {min(xs):7.1f}  "
              f"git / it {git / m:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
