"""Where the at-once requests' CPU goes, from ``perf``'s clock samples in their windows.

No hardware counters are needed (``cpu-clock`` is a software event): samples of the server
during a ``bench/probes/server/wall_threads.py`` run, on ``CLOCK_MONOTONIC``, are kept when they
fall between a request's send and its answer read, then counted by code (the interpreter, the
kernel, zstd, libc, BLAKE3), by thread, and the kernel's by system call (the frame under
``do_syscall_64``): the kernel's share is what callgrind's counts never include.

    python bench/probes/server/wall_threads.py --workspace WS --rounds 40 --json RUN.json &
    perf record -k CLOCK_MONOTONIC -e cpu-clock -F 4000 -g -p SERVER_PID -o CPU.data
    perf script -i CPU.data -F tid,time,ip,sym,dso > CPU.txt
    python bench/probes/server/wall_cpu.py RUN.json CPU.txt
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

HEAD = re.compile(r"\s*(\d+)\s+([\d.]+):")
KINDS = {"kernel.kallsyms": "kernel", "libpython": "interpreter", "backend_c": "zstd",
         "libc.so": "libc", "blake3": "BLAKE3", "orjson": "orjson",
         "_folderparts": "folder check"}


def kind(frame: str) -> str:
    return next((v for k, v in KINDS.items() if k in frame), "other")


def syscall(frames: list[str]) -> str:
    kernel = [f for f in frames if "kernel.kallsyms" in f]
    for i, f in enumerate(kernel):
        if "do_syscall_64" in f and i > 0:
            return kernel[i - 1].split()[1]
    return kernel[-1].split()[1] if kernel else "?"  # an interrupt, a fault


def main(argv: list[str]) -> int:
    data = json.loads(Path(argv[0]).read_text())
    hz = float(argv[2]) if len(argv) > 2 else 4000.0
    names = {int(k): v for k, v in data["summary"]["threads"].items()}
    samples = []
    for block in Path(argv[1]).read_text().strip().split("\n\n"):
        lines = block.strip().splitlines()
        m = HEAD.match(lines[0]) if lines else None
        if m is not None and len(lines) > 1:
            samples.append((int(m[1]), float(m[2]), [x.strip() for x in lines[1:]]))
    first, last = min(s[1] for s in samples), max(s[1] for s in samples)
    for which in ("checkpoints", "rewinds"):
        wins = [(r["monotonic"][0] / 1e9, r["monotonic"][1] / 1e9) for r in data[which][1:]]
        wins = [w for w in wins if w[0] >= first and w[1] <= last]  # recorded whole
        inside = [s for s in samples if any(a <= s[1] <= b for a, b in wins)]
        if not inside:
            continue
        n = len(inside)

        def share(counter: collections.Counter[str], n: int = n) -> dict[str, str]:
            return {k: f"{100 * v / n:.1f}%" for k, v in counter.most_common(10)}

        print(f"{which}: {len(wins)} requests, {n / len(wins) / hz * 1000:.2f} ms of samples "
              f"a request")
        print("  by code:", share(collections.Counter(kind(s[2][0]) for s in inside)))
        print("  by thread:", share(collections.Counter(names.get(s[0], "other (a helper)")
                                                        for s in inside)))
        print("  kernel, by system call:", share(collections.Counter(
            syscall(s[2]) for s in inside if kind(s[2][0]) == "kernel")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
