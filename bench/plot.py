"""Plot checkpoint time against the number of changed files, from bench/run.py's JSON.

python bench/plot.py bench/results.json bench/checkpoint_time.png
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt

SERIES = (
    ("git", "shadow git (add -A + commit)", "tab:red", "o"),
    ("cold", "Turnback, cold CLI", "tab:blue", "s"),
    ("warm", "Turnback, server + watcher (after a quiet 0.3 s)", "tab:green", "^"),
    ("atonce", "Turnback, server + watcher (asked at once)", "tab:olive", "v"),
)


def sweep(samples: dict[str, list[float]]) -> dict[str, dict[int, float]]:
    """``sweep.K.SIDE`` samples -> {side: {K: median seconds}}."""
    out: dict[str, dict[int, float]] = {}
    for key, xs in samples.items():
        m = re.fullmatch(r"sweep\.(\d+)\.(\w+)", key)
        if m and xs:
            out.setdefault(m.group(2), {})[int(m.group(1))] = statistics.median(xs)
    return out


def plot(results: dict[str, Any], png: Path) -> None:
    data = sweep(results["samples"])
    if not data:
        raise SystemExit("no sweep.* samples in the results: run bench/run.py with the sweep phase")
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for side, label, color, marker in SERIES:
        pts = sorted(data.get(side, {}).items())
        if pts:
            ax.plot([k for k, _ in pts], [v * 1000 for _, v in pts], marker=marker, color=color,
                    label=label)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("files changed since the last checkpoint")
    ax.set_ylabel("checkpoint time (ms, log)")
    m = results.get("machine", {})
    ax.set_title(
        f"Checkpoint time, {m.get('nproc', '?')} cores, workspace of "
        f"{results.get('workspace', {}).get('files', 50_000):,} files"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png)
    print(f"wrote {png}")


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("results.json")
    png = Path(argv[2]) if len(argv) > 2 else Path(__file__).with_name("checkpoint_time.png")
    plot(json.loads(src.read_text()), png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
