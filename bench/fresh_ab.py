"""Fresh-process checkpoints with no server, package folders and the shadow git interleaved.

Each variant is a package folder (``.../server``: ``git archive REF server`` output, or a
copy of this checkout's, byte-compiled) with its own copy of the workspace and, beside it,
``<copy>.shadow.git`` (``bench/shadow_git.py``'s ``ShadowGit(...).init()`` and a first
commit). Per round, for each variant: ``turnback checkpoint`` (both processes' CPU, from
``getrusage(RUSAGE_CHILDREN)``) and git's ``add -A`` + ``commit`` on the same copy; the order
reverses every other round. ``--edit``: one line appended to 10 files before each call
(the 10-file fresh checkpoint) instead of a no-op. Prints medians, minimums and means, with
the load average before and after:

    python bench/fresh_ab.py --rounds 12 base=SRC_A/server:WS_A work=SRC_B/server:WS_B
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TURNBACK = str(Path(sys.executable).with_name("turnback"))


def timed(cmds: list[list[str]], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system, all children) ms of running ``cmds`` one after another."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    for c in cmds:
        subprocess.run(c, env=env, check=True, stdout=subprocess.DEVNULL)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return (t1 - t0) * 1000, cpu * 1000


def git_cmds(ws: str) -> list[list[str]]:
    g = ["git", f"--git-dir={ws}.shadow.git", f"--work-tree={ws}"]
    return [[*g, "add", "-A"],
            [*g, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty",
             "--no-verify", "-m", "ab"]]


def edit(ws: str, mark: str) -> None:
    for f in sorted(glob.glob(f"{ws}/cli/**/*.py", recursive=True))[:10]:
        with open(f, "a") as fh:
            fh.write(f"# {mark}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--edit", action="store_true")
    ap.add_argument("variant", nargs="+", help="NAME=PACKAGE_FOLDER:WORKSPACE")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TURNBACK_BACKGROUND"] = "0"
    variants = []
    for v in a.variant:
        name, rest = v.split("=", 1)
        src, ws = rest.split(":", 1)
        variants.append((name, src, ws))
    order = [(kind, v) for v in variants for kind in ("turnback", "git")]
    got: dict[str, list[tuple[float, float]]] = {}
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for i in range(a.rounds):
        for kind, (name, src, ws) in order if i % 2 == 0 else order[::-1]:
            if a.edit:
                edit(ws, f"{kind} {i}")
            if kind == "turnback":
                cmd = [sys.executable, TURNBACK, "-C", ws, "checkpoint", "-m", "ab"]
                res = timed([cmd], dict(env, PYTHONPATH=src))
            else:
                res = timed(git_cmds(ws), dict(os.environ))
            got.setdefault(f"{kind} {name}", []).append(res)
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "load", load0, "->",
          load1, f"{a.rounds} rounds", "10 files edited" if a.edit else "no-op")
    for k, xs in got.items():
        w = [x[0] for x in xs]
        c = [x[1] for x in xs]
        print(f"{k:16s} wall median {statistics.median(w):6.1f} min {min(w):6.1f} "
              f"mean {statistics.mean(w):6.1f} | CPU median {statistics.median(c):6.1f} "
              f"min {min(c):6.1f}")
    for name, _src, _ws in variants:
        tb, git = got[f"turnback {name}"], got[f"git {name}"]
        print(f"git / turnback on {name}'s copy: wall "
              f"{statistics.median(x[0] for x in git) / statistics.median(x[0] for x in tb):.2f}"
              f"x, CPU "
              f"{statistics.median(x[1] for x in git) / statistics.median(x[1] for x in tb):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
