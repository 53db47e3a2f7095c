"""Probes of a checkpoint's record, lock and session event through the held store root
(branch ``trust32``), run by the ``redteam41`` pass; figures in bench/RESULTS.md.

    # one append's head read after MB of KIND
    python bench/probes/checkpoint/redteam41_probes.py tail KIND MB
    python bench/probes/checkpoint/redteam41_probes.py fds  # descriptors across 300 checkpoints
    # a by-path and a held-root appender at once
    python bench/probes/checkpoint/redteam41_probes.py race
    # SIGKILL a checkpointing process
    python bench/probes/checkpoint/redteam41_probes.py kill ROUNDS

``tail``'s KIND: ``torn`` (a last line of MB with no newline), ``long`` (a complete junk
line of MB), ``nul`` (MB of NUL bytes, then a newline), ``many`` (MB of two-byte junk
lines). Scratch data under ``$BENCHDATA`` (default /tmp), removed at the end.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.store.record_folders import open_record_folders


def _scratch() -> Path:
    return Path(tempfile.mkdtemp(dir=os.environ.get("BENCHDATA")))


def tail(kind: str, mb: int) -> None:
    d = _scratch()
    ws = d / "ws"
    ws.mkdir()
    # written a MB at a time: the probe's own bytes must not raise the peak measured
    piece, end = {"torn": (b"x", b""), "long": (b"y", b"\n"), "nul": (b"\0", b"\n"),
                  "many": (b"z\n", b"")}[kind]
    with Store.open(ws, store_dir=d / "st") as s:
        sid = s.start_session(title="t").id
        first = s.append(sid, "note", {"n": 0})
        path = s.root / "sessions" / f"{sid}.jsonl"
        with open(path, "ab") as f:
            for _ in range(mb):
                f.write(piece * ((1 << 20) // len(piece)))
            f.write(end)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpu = time.process_time()
        second = s.append(sid, "note", {"n": 1})
        cpu = time.process_time() - cpu
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) // 1024
        last = json.loads(path.read_bytes().split(b"\n")[-2])
    print(f"{kind} {mb} MB: append CPU {cpu:.2f} s, max RSS +{grown} MB, "
          f"parent is the last event: {second.parent == first.id}, "
          f"new line last: {last['id'] == second.id}")
    shutil.rmtree(d)


def fds() -> None:
    d = _scratch()
    ws = d / "ws"
    ws.mkdir()
    with Store.open(ws, store_dir=d / "st") as s:
        sid = s.start_session(title="t").id
        (ws / "f.txt").write_text("0")
        s.checkpoint(label="warm", session_id=sid)
        before = len(os.listdir("/proc/self/fd"))
        for i in range(200):
            (ws / "f.txt").write_text(str(i))
            s.checkpoint(label=f"c{i}", session_id=sid)
            if i % 2:
                s.checkpoint_now({"f.txt"}, label="now", session_id=sid)
        after = len(os.listdir("/proc/self/fd"))
    print(f"open descriptors before 300 checkpoints: {before}, after: {after}")
    shutil.rmtree(d)


def _appender(ws: str, st: str, sid: str, held: bool, n: int) -> None:
    with Store.open(Path(ws), store_dir=Path(st)) as s:
        for i in range(n):
            if held:  # as a checkpoint's event: the lock opened relative to the held root
                with open_record_folders(s._root_held, s.backend, sid) as folders:
                    s.append(sid, "note", {"held": held, "i": i}, sessions=folders.sessions)
            else:  # as the CLI's append: the lock opened by its path
                s.append(sid, "note", {"held": held, "i": i})


def race(n: int = 150) -> None:
    d = _scratch()
    ws = d / "ws"
    ws.mkdir()
    with Store.open(ws, store_dir=d / "st") as s:
        sid = s.start_session(title="t").id
        path = s.root / "sessions" / f"{sid}.jsonl"
    procs = [mp.Process(target=_appender, args=(str(ws), str(d / "st"), sid, held, n))
             for held in (False, True)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    events = [e for e in map(json.loads, path.read_bytes().splitlines()) if "type" not in e]
    chained = all(events[i]["parent"] == events[i - 1]["id"] for i in range(1, len(events)))
    print(f"events {len(events)} of {2 * n}, each the child of the one before: {chained}, "
          f"exit codes {[p.exitcode for p in procs]}")
    shutil.rmtree(d)


_LOOP = """
import sys
from pathlib import Path
from turnback import Store
ws, st, sid = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
with Store.open(ws, store_dir=st) as s:
    i = 0
    while True:
        i += 1
        (ws / "f.txt").write_text(str(i) * (i % 50 + 1))
        s.checkpoint(label=f"c{i}", session_id=sid)
        s.append(sid, "note", {"i": i})
"""


def kill(rounds: int) -> None:
    d = _scratch()
    ws = d / "ws"
    ws.mkdir()
    st = d / "st"
    with Store.open(ws, store_dir=st) as s:
        sid = s.start_session(title="t").id
    rng = random.Random(3)
    bad = 0
    for r in range(rounds):
        p = subprocess.Popen([sys.executable, "-c", _LOOP, str(ws), str(st), sid])
        time.sleep(0.6 + rng.random() * 0.6)
        p.send_signal(signal.SIGKILL)
        p.wait()
        with Store.open(ws, store_dir=st) as s:
            s.append(sid, "note", {"after": r})  # cuts a torn line the kill left
            recorded = {c.id for c in s.checkpoints()}
        raw = (st / "sessions" / f"{sid}.jsonl").read_bytes()
        events: list[dict[str, Any]] = [
            e for e in map(json.loads, raw.splitlines()) if "type" not in e]
        ids = [e["id"] for e in events]
        unrecorded = [e for e in events if e["kind"] == "checkpoint"
                      and e["data"]["checkpoint"] not in recorded]
        breaks = sum(events[i]["parent"] != events[i - 1]["id"] for i in range(1, len(events)))
        bad += bool(len(ids) != len(set(ids)) or unrecorded or breaks)
        print(f"round {r}: events {len(events)}, duplicated {len(ids) - len(set(ids))}, "
              f"naming an unrecorded checkpoint {len(unrecorded)}, parent breaks {breaks}")
    print(f"rounds with a defect: {bad} of {rounds}")
    shutil.rmtree(d)


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "tail":
        tail(sys.argv[2], int(sys.argv[3]))
    elif what == "fds":
        fds()
    elif what == "race":
        race()
    else:
        kill(int(sys.argv[2]))
