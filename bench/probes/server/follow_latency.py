"""Line on disk → checkpoint committed: how soon the server checkpoints a new agent prompt.

A writer plays Claude Code: it appends real transcript lines (read in place from
``../shared/transcripts/claude-code``; their ``uuid``/``parentUuid``/``sessionId``
are renamed so each prompt is a new event of one session, the rest of each line
is as Claude Code wrote it) to a session file under a private ``HOME``, while
``python -m turnback.server`` follows it on SPEC's workspace. For each prompt it
takes the time just before ``write`` of the prompt's line, and the time its own
inotify watch on the store's ``checkpoints.jsonl`` sees the "new turn"
checkpoint committed (the line is read back to check it). Between prompts it
edits three workspace files, appends the agent's answer lines and the turn's end
(``turn_duration``) and waits for the "end of turn" checkpoint, as a real turn
would.

    python bench/gen_workspace.py bench/work/ws --force
    python bench/probes/server/follow_latency.py bench/work/ws --prompts 220

Linux only (the writer's own inotify watch). Prints a summary and writes
``bench/work/follow_latency.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from inotify_simple import INotify, flags

REPO = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(REPO / "bench"), str(REPO / "server")]
from lsp_client import LspClient  # noqa: E402

TRANSCRIPTS = REPO.parent / "shared" / "transcripts" / "claude-code"


def real_lines() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Real user-prompt lines (those the importer takes for a person's prompt) and real
    assistant lines of Claude Code transcripts."""
    from turnback.events import Kind
    from turnback.importers.agents.claude_code import ClaudeCodeParser
    from turnback.importers.base import Context, EventRecord, RawLine, iter_raw_lines

    prompts: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for f in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        parser = ClaudeCodeParser(f, Context(workspace=Path("/"), home=Path("/nonexistent")))
        by_uuid: dict[str, dict[str, Any]] = {}
        prompt_ids: set[str] = set()
        for item in iter_raw_lines(f):
            if not isinstance(item, RawLine):
                continue
            try:
                obj = json.loads(item.data)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("uuid"), str):
                by_uuid[obj["uuid"]] = obj
            for rec in parser.feed(item):
                if isinstance(rec, EventRecord) and rec.event.kind == Kind.PROMPT \
                        and rec.event.data.get("sidechain") is not True:
                    prompt_ids.add(rec.event.id)
        for uuid, obj in by_uuid.items():
            if uuid in prompt_ids:
                prompts.append(obj)
            elif obj.get("type") == "assistant" and len(json.dumps(obj)) < 20_000:
                answers.append(obj)
    if not prompts or not answers:
        raise SystemExit(f"no real Claude Code prompt lines under {TRANSCRIPTS}")
    return prompts, answers


class Session:
    """The transcript the writer appends to, as one Claude Code session in the workspace."""

    def __init__(self, path: Path, ws: Path) -> None:
        self.path = path
        self.ws = ws
        self.parent: str | None = None
        self.n = 0
        self.run = os.urandom(4).hex()  # a store kept from an earlier run has its ids
        self.sid = f"{self.run}-0000-4000-8000-00000000be7c"
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def line(self, obj: dict[str, Any]) -> bytes:
        self.n += 1
        uuid = f"{self.run}-0000-4000-8000-{self.n:012d}"
        out = {**obj, "uuid": uuid, "parentUuid": self.parent, "sessionId": self.sid,
               "cwd": str(self.ws)}
        self.parent = uuid
        return (json.dumps(out) + "\n").encode()

    def append(self, obj: dict[str, Any]) -> float:
        data = self.line(obj)
        t0 = time.monotonic()
        os.write(self.fd, data)
        return t0

    def end_turn(self) -> None:
        os.write(self.fd, self.line({"type": "system", "subtype": "turn_duration",
                                     "durationMs": 1000, "content": "",
                                     "timestamp": "2026-11-25T00:00:00.000Z"}))


class Commits:
    """The writer's own watch on the store's list of checkpoints."""

    def __init__(self, index: Path) -> None:
        self.index = index
        self.ino = INotify()
        self.ino.add_watch(index.parent, flags.MODIFY | flags.CREATE | flags.MOVED_TO)
        self.seen = self.count()

    def count(self) -> int:
        try:
            return self.index.read_bytes().count(b"\n")
        except FileNotFoundError:
            return 0

    def wait(self, label: str, timeout: float = 30.0) -> float:
        """The time the next checkpoint labelled ``label`` was seen committed."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"no {label!r} checkpoint within {timeout} s")
            events = self.ino.read(timeout=int(left * 1000))
            t = time.monotonic()
            if not any(e.name == self.index.name for e in events):
                continue
            lines = self.index.read_bytes().splitlines()
            new = lines[self.seen:]
            if not new:
                continue
            self.seen = len(lines)
            labels = [json.loads(x).get("label") for x in new]
            if label in labels:
                return t


def edit(ws: Path, files: list[Path], rng: random.Random, turn: int) -> None:
    for f in rng.sample(files, 3):
        with f.open("a") as fh:
            fh.write(f"# turn {turn}\n")


def text_files(ws: Path, rng: random.Random) -> list[Path]:
    out = []
    for root, dirs, names in os.walk(ws):
        dirs[:] = [d for d in dirs if d not in (".turnback", "node_modules", ".git")]
        out.extend(Path(root, n) for n in names if n.endswith((".py", ".ts", ".go", ".md")))
        if len(out) > 2000:
            break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--prompts", type=int, default=220)
    ap.add_argument("--home", type=Path, default=REPO / "bench" / "work" / "agent-home")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "work" / "follow_latency.json")
    args = ap.parse_args()
    ws = args.workspace.resolve()
    rng = random.Random(15)
    prompts, answers = real_lines()

    if args.home.exists():
        shutil.rmtree(args.home)
    project = args.home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(ws))
    project.mkdir(parents=True)
    session = Session(project / "session.jsonl", ws)
    session.append(prompts[0])  # the session exists before the server starts: history

    env = {**os.environ, "HOME": str(args.home.resolve()),
           "PYTHONPATH": str(REPO / "server"), "BENCH_QUIET_SERVER": "1"}
    load_before = os.getloadavg()
    client = LspClient([sys.executable, "-m", "turnback.server"], cwd=ws, env=env)
    try:
        client.initialize(ws)
        t = time.monotonic()
        client.request("turnback/createCheckpoint", {"label": "bench base"}, timeout=1800)
        print(f"base checkpoint {time.monotonic() - t:.1f} s", file=sys.stderr)
        # The first checkpoint after the watcher (re)started walks the whole workspace
        # (the store was just made, or the server just started): take it here, timed
        # apart, so the prompts below measure the server as it runs all day.
        t = time.monotonic()
        client.request("turnback/createCheckpoint", {"label": "bench warm"}, timeout=1800)
        warm = time.monotonic() - t
        print(f"warm-up checkpoint {warm:.2f} s", file=sys.stderr)
        while client.request("turnback/status", {})["following"]["state"] != "following":
            time.sleep(0.05)
        commits = Commits(ws / ".turnback" / "checkpoints.jsonl")
        files = text_files(ws, rng)
        latencies: list[float] = []
        ends: list[float] = []
        for i in range(args.prompts):
            t0 = session.append(prompts[(i + 1) % len(prompts)])
            latencies.append(commits.wait("new turn") - t0)
            edit(ws, files, rng, i)
            for obj in rng.sample(answers, 2):
                session.append(obj)
            t0 = time.monotonic()
            session.end_turn()
            ends.append(commits.wait("end of turn") - t0)
        load_after = os.getloadavg()
        status = client.request("turnback/status", {})
    finally:
        client.close()
    ms = sorted(x * 1000 for x in latencies)
    ends_ms = sorted(x * 1000 for x in ends)

    def pct(xs: list[float], p: float) -> float:
        return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    result = {
        "commit": commit, "prompts": len(ms), "checkpoints": status.get("checkpoints"),
        "newTurn": {"p50": pct(ms, 50), "p90": pct(ms, 90), "p99": pct(ms, 99), "max": ms[-1],
                    "mean": statistics.fmean(ms)},
        "endOfTurn": {"p50": pct(ends_ms, 50), "p99": pct(ends_ms, 99), "max": ends_ms[-1]},
        "loadBefore": load_before, "loadAfter": load_after, "warmUpCheckpointS": warm,
        "newTurnMs": [round(x * 1000, 2) for x in latencies],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "newTurnMs"}, indent=2))


if __name__ == "__main__":
    main()
