"""What the red-team pass over sess16c/start23c (branch redteam6) adds or stops keeping.

1. The check that a session file's header names that file (``sessions/files._named_by``),
   made for every summary a listing returns: CPU of 10,000 checks, per round.
2. What pygls kept for a progress token the client gave after the walking checkpoint was
   answered (``concurrent.futures.Future`` in ``Progress.tokens``; dropped now): bytes each,
   by ``tracemalloc``.

    PYTHONPATH=server .venv/bin/python bench/probes/sessions/redteam6_costs.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from concurrent.futures import Future

from turnback.events import SessionHeader
from turnback.models import SessionSummary
from turnback.sessions.files import _named_by

SESSIONS = 10_000


def check_cpu_ms(rounds: int) -> list[float]:
    summaries = [SessionSummary(SessionHeader(id=f"s{i:05d}"), {}, 0, None)
                 for i in range(SESSIONS)]
    out = []
    for _ in range(rounds):
        start = time.process_time_ns()
        for s in summaries:
            _named_by(s, s.header.id)
        out.append((time.process_time_ns() - start) / 1e6)
    return sorted(out)


def token_bytes(n: int = 10_000) -> float:
    tokens: dict[str, Future[None]] = {}
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for i in range(n):
        tokens[f"turnback-{i:012x}"] = Future()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    return sum(s.size_diff for s in after.compare_to(before, "filename")) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    cpu = check_cpu_ms(args.rounds)
    print(f"{SESSIONS:,} header-names-file checks: CPU ms min {cpu[0]:.2f} "
          f"median {cpu[len(cpu) // 2]:.2f} max {cpu[-1]:.2f}")
    print(f"a progress token kept by pygls: {token_bytes():,.0f} bytes")


if __name__ == "__main__":
    main()
