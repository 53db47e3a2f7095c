"""Where a listing of many sessions spends its CPU, in-process, phase by phase.

On a store ``run_sessions.py`` made (``--workspace``): a fresh process's first
``Store.sessions`` (the summary index read and checked, every session file
stat-ed, the summaries built, sorted) and what a listing after one session grew
costs (stat of every file, sort, the summary index written again). CPU times
(``time.process_time``), best of ``--rounds`` for the phases of a warm process.

    python bench/probes/sessions/sessions_listing.py /work/benchdata/sessions-ws
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from turnback import Kind, Store
from turnback.events import SessionHeader, is_id
from turnback.sessions.files import FileSessions, _index_entry_ok
from turnback.store.facade import listing_order


def cpu_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.process_time()
    out = fn()
    return (time.process_time() - t) * 1000, out


def best_ms(fn: Callable[[], Any], rounds: int) -> float:
    return min(cpu_ms(fn)[0] for _ in range(rounds))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    ws: Path = a.workspace.resolve()
    root = ws / ".turnback"
    print(f"load {os.getloadavg()[:2]}")

    store = Store.open(ws)
    backend = store.backend
    assert isinstance(backend, FileSessions)
    t_index, _ = cpu_ms(backend._load_index)
    t_summaries, _ = cpu_ms(backend.summaries)
    t_sessions, _ = cpu_ms(lambda: store.sessions(0, 200))
    print(
        f"fresh process: index read and checked {t_index:.0f} ms, summaries (stat, build) "
        f"{t_summaries:.0f} ms, Store.sessions again (stat, sort) {t_sessions:.0f} ms CPU"
    )

    raw = (root / "index" / "summaries.json").read_bytes()
    data = orjson.loads(raw)
    entries = data["sessions"]

    def stat_all() -> int:
        n = 0
        with os.scandir(root / "sessions") as it:
            for de in it:
                de.stat()
                n += 1
        return n

    summaries = backend.summaries()
    phases = {
        "parse summaries.json": lambda: orjson.loads(raw),
        "check the entries": lambda: {k: e for k, e in entries.items()
                                      if is_id(k) and _index_entry_ok(e, "stats")},
        "scandir + stat every file": stat_all,
        "headers built": lambda: [SessionHeader.from_json(e["header"]) for e in entries.values()],
        "sort": lambda: sorted(summaries, key=listing_order, reverse=True),
    }  # fmt: skip
    print(f"warm, best of {a.rounds} ({len(raw):,} B index, {len(entries):,} sessions):")
    for name, fn in phases.items():
        print(f"  {name}: {best_ms(fn, a.rounds):.1f} ms CPU")

    writer = Store.open(ws)
    ids = sorted(backend.ids())
    try:
        for i in range(a.rounds):
            writer.append(ids[len(ids) // 3 + i], Kind.PROMPT, {"text": "one more"})
            t_sum, got = cpu_ms(backend.summaries)
            t_sort, _ = cpu_ms(lambda got=got: got.sort(key=listing_order, reverse=True))
            t_save, _ = cpu_ms(backend.save_index)
            print(
                f"after one session grew: summaries {t_sum:.0f} ms, sort {t_sort:.0f} ms, "
                f"summary index written {t_save:.0f} ms CPU"
            )
    finally:
        writer.close()
        store.close()
    print(f"load {os.getloadavg()[:2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
