"""The server as the request benchmarks drive it (``server_rounds.py``,
``atonce_wakeups.py``, ``atonce_handoffs.py``): their common options, the server started
on a workspace with its watcher's set trusted, and what ``/proc`` says of its threads (CPU
time, voluntary context switches: Linux only, 0 elsewhere)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from edits import Editor
from turnback_side import Turnback, use_ref

HERE = Path(__file__).resolve().parent


def arguments(doc: str | None, rounds: int) -> argparse.ArgumentParser:
    """The options every one of them takes: ``--workspace``, ``--rounds``, ``--ref``."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--ref", default=None)
    return ap


def started(a: argparse.Namespace) -> tuple[Turnback, Editor, int]:
    """``a.workspace``'s server started (at ``a.ref``'s package, copied under
    ``bench/work``, if given), its first checkpoint walked (the walk that makes the
    watcher's set trusted), an editor for the workspace's files, and the server's pid. A
    workspace with no store gets one first, by a CLI checkpoint."""
    if a.ref:
        use_ref(a.ref, HERE / "work")
    tb = Turnback(a.workspace)
    if not tb.store.exists():
        secs, _ = tb.checkpoint_cli("first")
        print(f"first checkpoint {secs:.1f}s", flush=True)
    ed = Editor(tb.workspace, seed=int(time.time()))
    tb.start_server(1.0)
    tb.checkpoint_server("after start")
    return tb, ed, tb.server_pid()


def _per_thread(pid: int, only: int | None, name: str, value: Callable[[str], int]) -> int:
    """``value`` of ``/proc/<pid>/task/<tid>/<name>`` summed over every thread of ``pid``
    (over thread ``only``); a thread gone meanwhile counts 0."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task") if only is None else [str(only)]
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                total += value(f.read())
        except (OSError, ValueError, IndexError):
            continue
    return total


def cpu_ns(pid: int, only: int | None = None) -> int:
    """CPU time of every thread of ``pid`` (of thread ``only``) so far (0 without schedstat)."""
    return _per_thread(pid, only, "schedstat", lambda text: int(text.split()[0]))


def user_sys_ticks(pid: int) -> tuple[int, int]:
    """The user and system CPU of every thread of ``pid`` so far, in clock ticks
    (``/proc/<pid>/stat``'s utime and stime, which include ended threads'; (0, 0) without
    it). The kernel splits the exact total by where its ticks fell: a request's ~10 ms is
    about one tick, so only a sum over many requests says which side its CPU is on."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0, 0
    return int(fields[11]), int(fields[12])


def _voluntary(status: str) -> int:
    for line in status.splitlines():
        if line.startswith("voluntary_ctxt_switches"):
            return int(line.split()[1])
    return 0


def switches(pid: int, only: int | None = None) -> int:
    """Voluntary context switches of every thread of ``pid`` (of thread ``only``) so far."""
    return _per_thread(pid, only, "status", _voluntary)


def traced(a: argparse.Namespace, tb: Turnback, pid: int) -> subprocess.Popen[bytes] | None:
    """``strace -c -f`` of the server into ``a.strace`` when asked (None otherwise), once
    surely attached: what it counts from then on is the rounds'."""
    if a.strace is None:
        return None
    tracer = subprocess.Popen(["strace", "-c", "-f", "-o", str(a.strace), "-p", str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tb.checkpoint_server("strace attached")
    time.sleep(1.0)
    return tracer


def untraced(tracer: subprocess.Popen[bytes] | None) -> None:
    """Detach ``traced``'s strace, which then writes its counts."""
    if tracer is not None:
        tracer.send_signal(signal.SIGINT)
        tracer.wait()
