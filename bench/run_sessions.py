"""Part 2: the server on a store of 1,000 sessions / 1,000,000 events (or more: ``--sessions``,
``--events``; 10,000 / 10,000,000 is issue 16's row, about 3 GB of session files).

Writes the session files directly in the store's format (docs/FORMAT.md: a
header line, then one JSON line per event) -- a million ``append`` calls would
measure the writer, not the reader. One session has exactly 10,000 events; the
other 999 share the rest with lognormal lengths. Events look like an agent's:
prompts, thinking, responses, tool calls and results, usage.

Then, over stdio JSON-RPC against ``python -m turnback.server``:
 - the first start on the never-listed store (the session index gets built);
 - server start to first answer (initialize, then ``turnback/sessions``), median of 3 starts;
 - ``turnback/sessions`` p50/p90/p99: pages as the extension asks them (offset 0, limit
   ``turnback.pageSize`` = 200, then 400, ... after each "Load more"), a page of 50, a page
   further on (offset), all sessions, and with a query;
 - ``turnback session list`` (the CLI, a fresh process each run): wall and CPU time;
 - ``turnback/session`` on the 10,000-event session (first page), first call and p50/p99;
 - peak RSS of the server (``VmHWM``) and its RSS when idle after start.

    python bench/run_sessions.py                 # store under bench/work/sessions-ws
    python bench/run_sessions.py --sessions 100 --events 100000   # a quick run
    python bench/run_sessions.py --workspace /work/benchdata/sessions-ws \
        --sessions 10000 --events 10000000                        # issue 16's row (3 GB)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import psutil
import turnback_side
from lsp_client import LspClient
from run import machine, pct

HERE = Path(__file__).resolve().parent
BIG = 10_000
BYTES_PER_EVENT = 300  # 300,279,218 bytes for 1,000,000 events (the first run): the disk asked
PAGE = 200  # the extension's turnback.pageSize default: the first page it asks for
TOOLS = ("Bash", "Read", "Edit", "Write", "Grep", "Glob")
_WORDS_TEXT = """
fix the failing test in the parser module and make sure the cache invalidation handles renamed
files before the next release so that users of the plugin api do not see stale results when
they switch branches or rebase their work
"""
WORDS = _WORDS_TEXT.split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def _events(rng: random.Random, sid: str, n: int, t0: float) -> tuple[list[bytes], str]:
    """``n`` event lines of one agent session; returns them and the head."""
    lines: list[bytes] = []
    prev: str | None = None
    ids: list[str] = []
    tool = 0
    msg = 0
    cycle = ("prompt", "thinking", "response", "tool_call", "tool_result", "usage")
    for i in range(n):
        eid = f"{sid[-6:]}{i:010x}"
        kind = cycle[i % len(cycle)] if i % 60 else "prompt"
        if kind == "prompt":
            data: dict[str, Any] = {"text": _text(rng, 18)}
        elif kind in ("thinking", "response"):
            msg += 1
            data = {"text": _text(rng, 40 if kind == "thinking" else 25), "messageId": f"m{msg}"}
        elif kind == "tool_call":
            tool += 1
            name = rng.choice(TOOLS)
            data = {"name": name, "input": {"command": _text(rng, 6)}, "toolUseId": f"t{tool}"}
        elif kind == "tool_result":
            data = {
                "toolUseId": f"t{tool}",
                "isError": rng.random() < 0.05,
                "output": _text(rng, 30),
            }
        else:
            data = {
                "input": rng.randint(100, 5000), "output": rng.randint(10, 2000),
                "cacheRead": rng.randint(0, 50000), "cacheCreation": rng.randint(0, 3000),
                "messageId": f"m{msg}",
            }  # fmt: skip
        # now and then a branch: a rewound conversation continues from a few events back
        parent = ids[-5] if prev is not None and len(ids) > 5 and i % 500 == 0 else prev
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + i * 2)) + f".{i % 1000:03d}Z"
        line = {"id": eid, "session": sid, "parent": parent, "ts": ts, "kind": kind, "data": data}
        lines.append(orjson.dumps(line) + b"\n")
        ids.append(eid)
        prev = eid
    return lines, prev or ""


def build(ws: Path, sessions: int, events: int, seed: int) -> dict[str, Any]:
    """Create the workspace and write its store's session files. Returns what was made."""
    if ws.exists():
        shutil.rmtree(ws)
    ws.mkdir(parents=True)
    (ws / "README.md").write_text("workspace of the sessions benchmark\n")
    from turnback import Store  # the store makes its own config; the sessions are ours

    Store.open(ws).close()
    sdir = ws / ".turnback" / "sessions"
    sdir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    big = min(BIG, events)
    rest = events - big
    weights = [rng.lognormvariate(0, 1.0) for _ in range(sessions - 1)]
    scale = rest / sum(weights) if weights else 0
    counts = [big] + [max(1, int(w * scale)) for w in weights]
    counts[-1] += events - sum(counts)
    base = time.mktime((2026, 1, 1, 0, 0, 0, 0, 0, 0))
    big_id = ""
    total_bytes = 0
    for i, n in enumerate(counts):
        started = base + i * 3600
        sid = time.strftime("%Y%m%dT%H%M%S", time.gmtime(started)) + f"-{i:06x}"
        if i == 0:
            big_id = sid
        header = {
            "type": "session", "format": 1, "id": sid, "title": f"agent run {i}: {_text(rng, 5)}",
            "agent": rng.choice(("claude-code", "codex", "aider", "ralph")), "model": "opus",
            "started": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(started)),
            "cwd": str(ws), "source": "turnback", "head": None,
        }  # fmt: skip
        lines, _head = _events(rng, sid, n, started)
        data = orjson.dumps(header) + b"\n" + b"".join(lines)
        (sdir / f"{sid}.jsonl").write_bytes(data)
        total_bytes += len(data)
    return {"sessions": sessions, "events": events, "bigSession": big_id, "bytes": total_bytes}


class RssWatch:
    """Samples a process's RSS every few ms; ``VmHWM`` gives the true peak."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.005)

    def hwm(self) -> int:
        """Peak resident set size from the kernel (bytes)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return self.peak

    def stop(self) -> None:
        self._stop.set()
        self._t.join()


def start(ws: Path, python: str, full: bool = True) -> tuple[LspClient, dict[str, float]]:
    """A server started on ``ws``, and the times to its first ``turnback/sessions`` answer
    and (``full``) to the full one after a partial answer."""
    client = LspClient([python, "-m", "turnback.server"], cwd=ws, env=turnback_side.env())
    client.initialize(ws)
    t_init = time.perf_counter() - client.started
    seen = len(client.notifications)
    first = client.request("turnback/sessions", {"offset": 0, "limit": PAGE})
    t_first = time.perf_counter() - client.started
    cpu = psutil.Process(client.proc.pid).cpu_times()  # less at the mercy of load than wall
    times = {"initialize": t_init, "firstSessions": t_first, "cpu": cpu.user + cpu.system,
             "partial": bool(first.get("partial")), "fullSessions": t_first,
             # sessions of the first page shown from their header line alone (not counted)
             "firstUncounted": sum(1 for s in first["sessions"] if s.get("counted") is False),
             "cpuFull": cpu.user + cpu.system}
    if times["partial"] and full:
        # the saved first page came first; the full listing's turnback/didChange (no session
        # named) says when to ask again, as the extension does
        deadline = time.monotonic() + 600
        while not any(m == "turnback/didChange" and not (p or {}).get("sessions")
                      and not (p or {}).get("checkpoints")
                      for _t, m, p in client.notifications[seen:]):
            if time.monotonic() > deadline:
                raise RuntimeError("no turnback/didChange after a partial answer within 600 s")
            time.sleep(0.002)
        full = client.request("turnback/sessions", {"offset": 0, "limit": PAGE})
        if full.get("partial"):
            raise RuntimeError("still partial after the full listing's turnback/didChange")
        times["fullSessions"] = time.perf_counter() - client.started
        cpu = psutil.Process(client.proc.pid).cpu_times()
        times["cpuFull"] = cpu.user + cpu.system
    return client, times


def series(client: LspClient, method: str, params: dict[str, Any], n: int) -> dict[str, Any]:
    xs = [client.timed(method, params)[0] for _ in range(n)]
    return {
        "p50": pct(xs, 50),
        "p90": pct(xs, 90),
        "p99": pct(xs, 99),
        "min": min(xs),
        "max": max(xs),
        "n": n,
    }


def after_appends(client: LspClient, ws: Path, total: int, n: int, seed: int) -> dict[str, Any]:
    """``turnback/sessions`` (the extension's first page) right after another process appended
    an event to one session and the server said so (``turnback/didChange``): what a view
    refreshing on every change of a live agent's session waits for."""
    from turnback import Store

    rng = random.Random(seed)
    store = Store.open(ws)
    ids = sorted(store.backend.ids())
    xs: list[float] = []
    try:
        for _ in range(n):
            sid = rng.choice(ids)
            seen = len(client.notifications)
            store.append(sid, "prompt", {"text": _text(rng, 12)})
            deadline = time.monotonic() + 30
            while not any(
                m == "turnback/didChange" and sid in (p or {}).get("sessions", [])
                for _t, m, p in client.notifications[seen:]
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no turnback/didChange naming {sid} within 30 s")
                time.sleep(0.005)
            xs.append(client.timed("turnback/sessions", {"offset": 0, "limit": PAGE})[0])
    finally:
        store.close()
    return {"p50": pct(xs, 50), "p90": pct(xs, 90), "p99": pct(xs, 99), "min": min(xs),
            "max": max(xs), "n": n}  # fmt: skip


def after_checkpoints(client: LspClient, ws: Path, n: int, seed: int) -> dict[str, Any]:
    """``turnback/sessions`` (the extension's first page) right after the server's own write:
    ``turnback/createCheckpoint`` in a session, as an agent's hook has it take one."""
    from turnback import Store

    store = Store.open(ws)
    ids = sorted(store.backend.ids())
    store.close()
    rng = random.Random(seed)
    xs: list[float] = []
    for _ in range(n):
        client.request("turnback/createCheckpoint", {"sessionId": rng.choice(ids)})
        xs.append(client.timed("turnback/sessions", {"offset": 0, "limit": PAGE})[0])
    return {"p50": pct(xs, 50), "p90": pct(xs, 90), "p99": pct(xs, 99), "min": min(xs),
            "max": max(xs), "n": n}  # fmt: skip


def after_rewinds(client: LspClient, ws: Path, n: int, seed: int) -> dict[str, Any]:
    """``turnback/sessions`` (the extension's first page) right after the server's own
    ``turnback/rewind`` (files and conversation: a safety checkpoint, a head line in the
    session) and, in turns, ``turnback/undo`` of it."""
    from turnback import Store

    store = Store.open(ws)
    ids = sorted(store.backend.ids())
    store.close()
    rng = random.Random(seed)
    xs: list[float] = []
    for i in range(n):
        if i % 2:
            client.request("turnback/undo", {})
        else:
            cp = client.request("turnback/createCheckpoint", {"sessionId": rng.choice(ids)})
            client.request("turnback/rewind", {"checkpoint": cp["checkpoint"]["id"],
                                               "mode": "both"})
        xs.append(client.timed("turnback/sessions", {"offset": 0, "limit": PAGE})[0])
    return {"p50": pct(xs, 50), "p90": pct(xs, 90), "p99": pct(xs, 99), "min": min(xs),
            "max": max(xs), "n": n}  # fmt: skip


def cli_list(ws: Path, python: str, args: list[str], runs: int) -> dict[str, Any]:
    """``turnback ARGS`` (a ``session list``) in a fresh process, as a user's shell runs it: the
    median wall time from spawn to exit and the median CPU time (user + system) it took."""
    walls: list[float] = []
    cpus: list[float] = []
    out = b""
    for _ in range(runs):
        before = os.times()
        t0 = time.perf_counter()
        done = subprocess.run(
            [str(Path(python).with_name("turnback")), *args], cwd=ws,
            env=turnback_side.env(), capture_output=True, check=True,
        )  # fmt: skip
        walls.append(time.perf_counter() - t0)
        after = os.times()
        cpus.append(after.children_user - before.children_user
                    + after.children_system - before.children_system)  # fmt: skip
        out = done.stdout
    return {
        "wall": pct(walls, 50),
        "cpu": pct(cpus, 50),
        "walls": walls,
        "cpus": cpus,
        "bytes": len(out),
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "sessions-ws")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="keep an existing store (no build; with no summary index, the first start is timed)",
    )
    ap.add_argument("--out", type=Path, default=HERE / "results_sessions.json")
    ap.add_argument(
        "--ref", default=None, help="measure turnback as committed at REF (default: the work tree)"
    )
    ap.add_argument("--cli-runs", type=int, default=5)
    a = ap.parse_args(argv)
    need = a.events * BYTES_PER_EVENT
    free = shutil.disk_usage(a.workspace.parent if a.workspace.parent.exists() else HERE).free
    if not a.reuse:
        print(
            f"the store needs about {need / 1e9:.1f} GB of session files "
            f"({free / 1e9:.1f} GB free)",
            flush=True,
        )
        if need > free * 0.9:
            print(
                "not enough free disk: use --workspace on a larger disk or fewer --events",
                file=sys.stderr,
            )
            return 1
    commit = turnback_side.use_ref(a.ref, HERE / "work") if a.ref else "working tree"
    ws: Path = a.workspace.resolve()
    res: dict[str, Any] = {
        "machine": machine(),
        "load": [os.getloadavg()[:2]],
        "turnbackCommit": commit,
    }

    if a.reuse and (ws / ".turnback" / "sessions").exists():
        res["store"] = json.loads((ws.parent / (ws.name + ".json")).read_text())
    else:
        t0 = time.perf_counter()
        res["store"] = build(ws, a.sessions, a.events, a.seed)
        res["store"]["buildSeconds"] = time.perf_counter() - t0
        (ws.parent / (ws.name + ".json")).write_text(json.dumps(res["store"]))
        shutil.rmtree(ws / ".turnback" / "index", ignore_errors=True)
    big = res["store"]["bigSession"]
    print(f"store: {res['store']}", flush=True)

    # 1. first start on a never-listed store: the summary index is built from every line
    if not (ws / ".turnback" / "index" / "summaries.json").exists():
        client, times = start(ws, a.python)
        res["firstStartNoIndex"] = times
        client.close()
        print(f"first start, no index: {times}", flush=True)

    # 2. start to first answer, the store as a user has it (index built)
    starts = []
    for _ in range(3):
        client, times = start(ws, a.python)
        starts.append(times)
        client.close()
    res["start"] = {k: sorted(s[k] for s in starts)[1] for k in starts[0]}
    res["start"]["all"] = starts
    print(f"start: {res['start']}", flush=True)

    # 2b. the same on a store with no session, in turns with the full one: what the sessions add
    empty = ws.parent / (ws.name + "-empty")
    if not (empty / ".turnback").exists():
        from turnback import Store

        empty.mkdir(parents=True, exist_ok=True)
        Store.open(empty).close()
    pairs: list[tuple[dict[str, float], dict[str, float]]] = []
    for _ in range(3):
        row = []
        for where in (empty, ws):
            client, times = start(where, a.python)
            row.append(times)
            client.close()
        pairs.append((row[0], row[1]))
    res["startPairs"] = pairs
    print(f"start, empty store / this store: {pairs}", flush=True)

    # 3. the requests, with RSS watched from the start
    client, times = start(ws, a.python)
    watch = RssWatch(client.proc.pid)
    time.sleep(0.5)
    res["rssIdle"] = client_rss(client)
    n = a.requests
    res["sessions50"] = series(client, "turnback/sessions", {"limit": 50}, n)
    total = res["store"]["sessions"]
    res["sessionsPage"] = series(client, "turnback/sessions", {"offset": 0, "limit": PAGE}, n)
    res["sessionsPage5"] = series(  # after four "Load more": the extension asks from 0 again
        client, "turnback/sessions", {"offset": 0, "limit": 5 * PAGE}, max(10, n // 4)
    )
    res["sessionsLater"] = series(  # a page further on, as the CLI's --offset asks it
        client, "turnback/sessions", {"offset": total // 2, "limit": PAGE}, max(10, n // 4)
    )
    res["sessionsAll"] = series(client, "turnback/sessions", {}, max(10, n // 10))
    res["sessionsQuery"] = series(
        client, "turnback/sessions", {"query": "agent run 7", "limit": 50}, max(10, n // 10)
    )
    t, first = client.timed("turnback/session", {"sessionId": big, "limit": 100})
    res["sessionBigFirst"] = t
    res["sessionBigTotal"] = first.get("total")
    res["sessionBig100"] = series(
        client, "turnback/session", {"sessionId": big, "limit": 100}, max(10, n // 10)
    )
    res["sessionBigDefault"] = series(
        client, "turnback/session", {"sessionId": big}, max(10, n // 10)
    )
    res["sessionsAfterAppend"] = after_appends(client, ws, total, max(10, n // 10), a.seed)
    res["sessionsAfterCheckpoint"] = after_checkpoints(client, ws, max(10, n // 10), a.seed)
    res["sessionsAfterRewind"] = after_rewinds(client, ws, max(10, n // 10), a.seed)
    res["rssPeak"] = watch.hwm()
    res["rssPeakSampled"] = watch.peak
    watch.stop()
    client.close()
    listing = ["session", "list"]
    res["cliList"] = cli_list(ws, a.python, [*listing, "--limit", str(PAGE)], a.cli_runs)
    res["cliListJson"] = cli_list(ws, a.python, ["--json", *listing, "--limit", str(PAGE)],
                                  a.cli_runs)  # fmt: skip
    res["cliListAll"] = cli_list(ws, a.python, listing, a.cli_runs)
    res["load"].append(os.getloadavg()[:2])
    print_table(res)
    a.out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {a.out}")
    return 0


def client_rss(client: LspClient) -> int:
    return int(psutil.Process(client.proc.pid).memory_info().rss)


def _p(x: dict[str, Any]) -> str:
    return f"{x['p50'] * 1000:.1f} / {x['p90'] * 1000:.1f} / {x['p99'] * 1000:.1f} ms"


def _span(xs: list[float]) -> str:
    """The least and the most of ``xs`` (sorted seconds), in ms."""
    return f"{xs[0] * 1000:.0f}–{xs[-1] * 1000:.0f}"


def _cli(x: dict[str, Any]) -> str:
    return f"{x['wall'] * 1000:.0f} ms (CPU {x['cpu'] * 1000:.0f} ms), {x['bytes']:,} B out"


def print_table(r: dict[str, Any]) -> None:
    mb = 1024 * 1024
    start, first = r["start"]["firstSessions"], r["start"]["initialize"]
    n = r["store"]["sessions"]
    rows: list[tuple[str, str, str, bool | None]] = [
        ("`turnback/sessions` first 50, p50 / p90 / p99", _p(r["sessions50"]), "p50 ≤ 5 ms",
         r["sessions50"]["p50"] <= 0.005),
        (f"`turnback/sessions` offset 0, limit {PAGE} (the extension's first page)",
         _p(r["sessionsPage"]), "p50 ≤ 5 ms", r["sessionsPage"]["p50"] <= 0.005),
        (f"`turnback/sessions` offset 0, limit {5 * PAGE} (after four \"Load more\")",
         _p(r["sessionsPage5"]), "", None),
        (f"`turnback/sessions` offset {n // 2:,}, limit {PAGE}", _p(r["sessionsLater"]), "",
         None),
        (f"`turnback/sessions` limit {PAGE} after another process appended to a session",
         _p(r["sessionsAfterAppend"]), "", None),
        (f"`turnback/sessions` limit {PAGE} after the server's own checkpoint in a session",
         _p(r["sessionsAfterCheckpoint"]) if "sessionsAfterCheckpoint" in r else "-", "", None),
        (f"`turnback/sessions` limit {PAGE} after the server's own rewind or undo",
         _p(r["sessionsAfterRewind"]) if "sessionsAfterRewind" in r else "-", "", None),
        (f"`turnback/sessions` all {n:,}, p50 / p90 / p99", _p(r["sessionsAll"]), "", None),
        ("`turnback/sessions` with a query, p50 / p90 / p99", _p(r["sessionsQuery"]), "", None),
        ("`turnback/session`, big session, first 100: first call",
         f"{r['sessionBigFirst'] * 1000:.1f} ms", "", None),
        ("`turnback/session`, big session, first 100, p50 / p90 / p99", _p(r["sessionBig100"]), "",
         None),
        ("`turnback/session`, big session, default page, p50 / p90 / p99",
         _p(r["sessionBigDefault"]), "", None),
        ("server start → first `turnback/sessions` answer",
         f"{start * 1000:.0f} ms (initialize {first * 1000:.0f} ms; "
         f"server CPU {r['start']['cpu'] * 1000:.0f} ms)", "≤ 1 s", start <= 1.0),
        ("peak RSS (VmHWM)",
         f"{r['rssPeak'] / mb:.0f} MB (idle after start {r['rssIdle'] / mb:.0f} MB)",
         "≤ 150 MB", r["rssPeak"] <= 150 * mb),
        (f"CLI `turnback session list --limit {PAGE}`", _cli(r["cliList"]), "", None),
        (f"CLI `turnback session list --json --limit {PAGE}`", _cli(r["cliListJson"]), "", None),
        ("CLI `turnback session list` (all)", _cli(r["cliListAll"]), "", None),
    ]  # fmt: skip
    if "startPairs" in r:
        e = sorted(p[0]["firstSessions"] for p in r["startPairs"])
        f = sorted(p[1]["firstSessions"] for p in r["startPairs"])
        ec = sorted(p[0]["cpu"] for p in r["startPairs"])
        fc = sorted(p[1]["cpu"] for p in r["startPairs"])
        rows.append((
            "server start → first answer, a store with no session / this one (3 pairs, in turns)",
            f"{_span(e)} / {_span(f)} ms (CPU {_span(ec)} / {_span(fc)} ms)", "", None,
        ))  # fmt: skip
    if any(s.get("partial") for s in r["start"]["all"]):
        full = sorted(s["fullSessions"] for s in r["start"]["all"])
        rows.append((
            "… first answers partial (the saved first page) / then the full answer (3 starts)",
            f"{sum(1 for s in r['start']['all'] if s.get('partial'))} of 3 / "
            f"{_span(full)} ms", "", None,
        ))  # fmt: skip
    if "firstStartNoIndex" in r:
        t = r["firstStartNoIndex"]["firstSessions"]
        rows.append(("first start on a never-listed store (index built)", f"{t:.1f} s", "", None))
    lines = ["| figure | Turnback | target | met |", "|---|---:|---|---|"]
    for name, val, target, met in rows:
        lines.append(
            f"| {name} | {val} | {target} | {'' if met is None else ('yes' if met else 'NO')} |"
        )
    r["tableMarkdown"] = "\n".join(lines)
    print(r["tableMarkdown"])


if __name__ == "__main__":
    sys.exit(main())
