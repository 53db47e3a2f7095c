"""Line attribution: blame of a 5,000-line file with 1,000 checkpoints in its history.

    PYTHONPATH=server .venv/bin/python bench/probes/sessions/blame.py [TURNS]

TURNS agent turns (default 500), each taking a checkpoint at its start and at its end, the
file edited inside every turn (an agent's line) and between turns (a person's line): every
checkpoint holds a new version (2 × TURNS in all). Measured: the walk in-process (history
and blame, cold); through the language server (`turnback/blame`): the first answer, warm
answers, and the answer after one more turn (timed once the server has announced the new
checkpoints, taken by another process, then by the server as the CLI hand-off does); a
fresh CLI process (`turnback blame --json`) with no saved walk, then with
the walk the run before saved (attribution/saved.py). Prints milliseconds with the load
average beside them.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from turnback import Store
from turnback.attribution.blame import blame_file
from turnback.attribution.history import load_history
from turnback.events import Kind

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from lsp_client import LspClient

REPO = Path(__file__).resolve().parents[3]
LINES = 5000
RUNS = 10  # turns added while the server runs, for each way of adding them


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def edit(f: Path, lines: list[str], rng: random.Random, tag: str) -> None:
    lines[rng.randrange(len(lines))] = f"{tag} {rng.random():.12f}\n"
    f.write_text("".join(lines))


def one_turn(s: Store, sid: str, f: Path, lines: list[str], rng: random.Random, k: int) -> None:
    edit(f, lines, rng, f"person {k}")
    s.append(sid, Kind.PROMPT, {"text": f"change {k}"})
    s.checkpoint(session_id=sid, dirty=["big.py"])
    s.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
    edit(f, lines, rng, f"agent {k}")
    s.checkpoint(session_id=sid, dirty=["big.py"])


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rng = random.Random(22)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        f = ws / "big.py"
        lines = [f"line {i} = compute({i}, {rng.random():.12f})\n" for i in range(LINES)]
        f.write_text("".join(lines))
        with Store.open(ws) as s:
            s.config.fsync = "never"
            s.checkpoint(label="start")
            sid = s.start_session(agent="claude-code", model="bench").id
            t0 = time.perf_counter()
            for k in range(turns):
                one_turn(s, sid, f, lines, rng, k)
            print(f"built {len(s.checkpoints())} checkpoints in {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            h = load_history(s)
            t1 = time.perf_counter()
            b = blame_file(s, h, "big.py")
            t2 = time.perf_counter()
            kinds = {o.kind for o in b.origins}
            print(f"in-process cold: history {1000 * (t1 - t0):.1f} ms, walk "
                  f"{1000 * (t2 - t1):.1f} ms ({len(b.origins)} lines, {sorted(kinds)}) "
                  f"[load {load()}]")

        env = dict(os.environ, PYTHONPATH=str(REPO / "server"), BENCH_QUIET_SERVER="1")
        client = LspClient([sys.executable, "-m", "turnback.server"], ws, env)
        try:
            client.initialize(ws)
            deadline = time.monotonic() + 60
            while not client.request("turnback/status", {})["watching"]:
                assert time.monotonic() < deadline, "the server's watcher did not start"
                time.sleep(0.05)
            # as the editor asks: the lines around the visible ones (annotator.ts's margin)
            ask = {"path": "big.py", "startLine": 2000, "endLine": 2660}
            first, res = client.timed("turnback/blame", ask)
            assert res["lineCount"] == LINES
            whole = client.timed("turnback/blame", {"path": "big.py"})[0]
            warm = [client.timed("turnback/blame", ask)[0] for _ in range(20)]
            print(f"server: first {1000 * first:.1f} ms, whole file warm {1000 * whole:.1f} ms, "
                  f"warm median "
                  f"{1000 * statistics.median(warm):.2f} ms (min {1000 * min(warm):.2f}, max "
                  f"{1000 * max(warm):.2f}) [load {load()}]")
            after = []
            for k in range(RUNS):
                seen = len(client.notifications)
                with Store.open(ws) as s:
                    s.config.fsync = "never"
                    one_turn(s, sid, f, lines, rng, turns + k)
                wait_change(client, seen)
                after.append(client.timed("turnback/blame", ask)[0])
            print(f"server after one new turn (2 checkpoints by another process): "
                  f"{spread(after)} [load {load()}]")
            # as an agent's hook does it: its events appended by another process, the
            # checkpoints handed to the server (the CLI hand-off), which wrote their objects
            after = []
            for k in range(RUNS):
                with Store.open(ws) as s:
                    edit(f, lines, rng, f"person {turns + RUNS + k}")
                    s.append(sid, Kind.PROMPT, {"text": f"change {turns + RUNS + k}"})
                client.request("turnback/createCheckpoint", {"sessionId": sid})
                with Store.open(ws) as s:
                    s.append(sid, Kind.TOOL_CALL, {"name": "Edit"})
                    edit(f, lines, rng, f"agent {turns + RUNS + k}")
                seen = len(client.notifications)
                client.request("turnback/createCheckpoint", {"sessionId": sid})
                wait_change(client, seen)
                after.append(client.timed("turnback/blame", ask)[0])
            print(f"server after one new turn (2 checkpoints by the server): "
                  f"{spread(after)} [load {load()}]")
        finally:
            client.close()

        def cli_run() -> float:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "turnback.cli.main", "--json", "blame",
                            "big.py"], cwd=ws, env=env, check=True, stdout=subprocess.DEVNULL)
            return time.perf_counter() - t0

        saved_dir = ws / ".turnback" / "cache" / "blame"
        for p in saved_dir.iterdir():
            p.unlink()  # the walk the server saved: the first CLI run walks it all
        cold = cli_run()
        print(f"fresh CLI, no saved walk: {1000 * cold:.0f} ms [load {load()}]")
        cli = []
        for _ in range(3):
            cli.append(cli_run())
        print(f"fresh CLI, the walk saved by the run before: "
              f"{', '.join(f'{1000 * c:.0f}' for c in cli)} ms "
              f"[load {load()}]")


def spread(seconds: list[float]) -> str:
    ms = sorted(1000 * x for x in seconds)
    return (f"median {statistics.median(ms):.2f} ms, min {ms[0]:.2f}, max {ms[-1]:.2f} "
            f"({len(ms)} runs: {', '.join(f'{1000 * x:.1f}' for x in seconds)})")


def wait_change(client: LspClient, seen: int, timeout: float = 30.0) -> None:
    """Until the server announces new checkpoints (its cached history dropped then)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _t, method, params in client.notifications[seen:]:
            if method == "turnback/didChange" and (params or {}).get("checkpoints"):
                return
        time.sleep(0.005)
    raise AssertionError("no turnback/didChange for the new checkpoints")


if __name__ == "__main__":
    main()
