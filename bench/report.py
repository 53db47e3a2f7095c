"""Markdown tables for bench/RESULTS.md from the two result files (no figure typed by hand).

python bench/report.py bench/results.json bench/results_sessions.json
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any


def machine(m: dict[str, Any]) -> str:
    return (
        f"- {m['nproc']} cores, {m['cpu']}, {m['memBytes'] / 2**30:.0f} GB RAM\n"
        f"- disk: `{m['disk']}`\n"
        f"- Python {m['python']} on {m['platform']}; {m['git']}"
    )


def load(r: dict[str, Any]) -> str:
    rows = r.get("load", [])
    if rows and isinstance(rows[0], dict):
        return ", ".join(f"{x['phase']}: {x['load1']:.1f}" for x in rows)
    return ", ".join(f"{x[0]:.1f}" for x in rows)


def sweep(r: dict[str, Any]) -> str:
    s = r["samples"]
    ks = sorted({int(k.split(".")[1]) for k in s if k.startswith("sweep.") and k.count(".") == 2})
    out = [
        "| files changed | Turnback, server | Turnback, cold CLI | shadow git |",
        "|---:|---:|---:|---:|",
    ]
    for k in ks:

        def cell(side: str, k: int = k) -> str:
            xs = s.get(f"sweep.{k}.{side}")
            return f"{statistics.median(xs) * 1000:.0f} ms" if xs else "–"

        out.append(f"| {k:,} | {cell('warm')} | {cell('cold')} | {cell('git')} |")
    return "\n".join(out)


def sizes(r: dict[str, Any]) -> str:
    f = r["figures"]
    out = ["| store | after | Turnback | shadow git |", "|---|---|---:|---:|"]
    for key, label in (("size.first", "first checkpoint"), ("size.after100", "+ 100 × 10 files")):
        if key in f:
            for kind in ("apparent", "disk"):
                tb, git = f[key]["turnback"], f[key]["git"]
                out.append(
                    f"| {kind} | {label} | {tb[kind] / 2**20:.1f} MB ({tb['files']:,} files) | "
                    f"{git[kind] / 2**20:.1f} MB ({git['files']:,} files) |"
                )
    return "\n".join(out)


def main(argv: list[str]) -> int:
    run = json.loads(Path(argv[1]).read_text())
    print(f"Turnback at `{run.get('turnbackCommit', '?')}`; workspace: {run.get('workspace')}\n")
    print(machine(run["machine"]))
    print(f"- load average (1 min) per phase: {load(run)}\n")
    print(run["tableMarkdown"] + "\n")
    print(sweep(run) + "\n")
    print(sizes(run) + "\n")
    if len(argv) > 2 and Path(argv[2]).exists():
        ses = json.loads(Path(argv[2]).read_text())
        print(f"Sessions store: {ses['store']}; Turnback at `{ses.get('turnbackCommit', '?')}`")
        print(f"load average (1 min) at start / end: {load(ses)}\n")
        print(ses["tableMarkdown"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
