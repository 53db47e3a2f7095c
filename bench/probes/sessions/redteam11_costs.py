"""What the red-team pass redteam11 measured: ``record``'s pick and the partial listing's
query on a store never listed (no ``index/``), CPU of one fresh process each.

Writes ``N`` session files of a few lines each (header, ``EVENTS`` events, the newest
``OPEN`` left open, every other one ended) into ``DIR/.turnback/sessions`` (the store made
first), optionally one newest session that is a sparse file of 1 GiB, then prints, as
JSON, the CPU seconds of: ``newest_open_session`` in a fresh store (twice: the second
after the first's count was kept), and ``sessions_at_hand_page`` with and without a query.
Run with ``PYTHONPATH`` naming another checkout's ``server/`` for an A/B.

    python bench/probes/sessions/redteam11_costs.py /work/benchdata/redteam11/s10k --sessions \\
        10000 \
        [--events 20] [--newest-events 100000] [--sparse] [--build]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson


def _at(i: int) -> str:
    """The ``i``-th session's start: one second after the one before."""
    t = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=i)
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def build(ws: Path, n: int, events: int, newest_events: int, sparse: bool) -> None:
    from turnback import Store

    with Store.open(ws, create=True) as store:
        root = store.root
    sessions = root / "sessions"
    for i in range(n):
        sid = f"s{i:06d}"
        lines = [orjson.dumps({"type": "session", "format": 1, "id": sid, "title": f"run {i}",
                               "agent": "codex", "started": _at(i), "source": "turnback",
                               "head": None})]
        head = None
        count = newest_events if i == n - 1 else events
        for e in range(count):
            eid = f"{i:08x}{e:08x}"
            lines.append(orjson.dumps({"id": eid, "session": sid, "parent": head,
                                       "ts": "2026-01-02T00:00:00.000Z", "kind": "prompt",
                                       "data": {"text": "x" * 80}}))
            head = eid
        if i < n - 1:
            lines.append(orjson.dumps({"type": "meta", "ended": "2026-01-03T00:00:00.000Z",
                                       "head": head}))
        (sessions / f"{sid}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    if sparse:  # the newest header, then 1 GiB of nothing
        path = sessions / "zsparse.jsonl"
        path.write_bytes(orjson.dumps({"type": "session", "format": 1, "id": "zsparse",
                                       "title": "sparse", "agent": "codex",
                                       "started": "2026-12-31T00:00:00.000Z",
                                       "head": None}) + b"\n")
        os.truncate(path, 1 << 30)
    shutil.rmtree(root / "index", ignore_errors=True)


def cpu(fn: object) -> tuple[float, object]:
    t0 = time.process_time()
    got = fn()  # type: ignore[operator]
    return time.process_time() - t0, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--events", type=int, default=20)
    ap.add_argument("--newest-events", type=int, default=20)
    ap.add_argument("--sparse", action="store_true")
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--what", choices=["pick", "query"], default="pick")
    args = ap.parse_args()
    from turnback import Store

    if args.build:
        args.workspace.mkdir(parents=True, exist_ok=True)
        build(args.workspace, args.sessions, args.events, args.newest_events, args.sparse)
        return
    out: dict[str, object] = {"load": Path("/proc/loadavg").read_text().split()[:3]}
    index = args.workspace / ".turnback" / "index"
    if args.what == "pick":
        shutil.rmtree(index, ignore_errors=True)
        for run in ("first", "second", "after_append"):
            with Store.open(args.workspace) as store:
                if run == "after_append":  # what the pick then ``record`` did: one event
                    store.append(str(out["first"]["picked"]),  # type: ignore[index]
                                 "note", {"text": "recorded"})
                t, got = cpu(store.newest_open_session)
            out[run] = {"cpu_s": round(t, 4), "picked": got}
        shutil.rmtree(index, ignore_errors=True)
    else:
        shutil.rmtree(index, ignore_errors=True)
        for query in (None, "run 1"):
            with Store.open(args.workspace) as store:
                t, got = cpu(lambda q=query: store.sessions_at_hand_page(None, 0, 200, q))
            out[f"query={query}"] = {"cpu_s": round(t, 4), "total": got[1]}  # type: ignore[index]
    out["load_after"] = Path("/proc/loadavg").read_text().split()[:3]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
