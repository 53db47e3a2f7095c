"""Several processes writing one store at once: no event lost, doubled or torn.

Eight writers append 1,000 events each — all to one session, then each to its
own — while another process edits files and checkpoints, and another runs gc
with retention. Afterwards every event is there exactly once, each session is a
single unbroken chain (the head is read under the lock), and fsck is clean.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from turnback import Store

from .crashkit import tally
from .wsgen import edit_workspace, make_workspace

WRITERS = 8
EVENTS = 1000


def fork(fn: Callable[[], None]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            fn()
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        os._exit(code)
    return pid


def wait_all(pids: list[int]) -> list[int]:
    return [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids]


@pytest.mark.parametrize("layout", ["one session", "a session each"])
def test_eight_writers_with_checkpoints_and_gc(tmp_path: Path, layout: str) -> None:
    ws = tmp_path / "ws"
    make_workspace(ws, random.Random(1))
    store = Store.open(ws)
    sessions = ["shared"] if layout == "one session" else [f"w{i}" for i in range(WRITERS)]
    for sid in sessions:
        store.start_session(session_id=sid)
    stop = tmp_path / "stop"

    def writer(w: int) -> Callable[[], None]:
        def run() -> None:
            st = Store.open(ws)
            sid = sessions[w % len(sessions)]
            for i in range(EVENTS):
                st.append(sid, "note", {"w": w, "i": i, "pad": "y" * (i % 97)})
        return run

    def checkpointer() -> None:
        rng = random.Random(2)
        st = Store.open(ws)
        n = 0
        while not stop.exists():
            edit_workspace(ws, rng, n=2)
            st.checkpoint(auto=True)
            n += 1
        (tmp_path / "checkpoints").write_text(str(n))

    def collector() -> None:
        st = Store.open(ws)
        n = 0
        while not stop.exists():
            st.gc(keep_last=3)
            n += 1
            time.sleep(0.05)
        (tmp_path / "gcs").write_text(str(n))

    started = time.monotonic()
    background = [fork(checkpointer), fork(collector)]
    writers = [fork(writer(w)) for w in range(WRITERS)]
    codes = wait_all(writers)
    stop.touch()
    codes += wait_all(background)
    elapsed = time.monotonic() - started
    assert codes == [0] * (WRITERS + 2), f"a process failed: exit codes {codes}"

    fresh = Store.open(ws)
    seen: dict[int, list[int]] = {w: [] for w in range(WRITERS)}
    for sid in sessions:
        log = fresh.session(sid)
        assert not log.problems, log.problems
        ids = [e.id for e in log.events]
        assert len(ids) == len(set(ids)), f"doubled event ids in {sid}"
        for prev, e in zip(log.events, log.events[1:], strict=False):
            assert e.parent == prev.id, f"{sid}: {e.id} does not follow {prev.id}"
        for e in log.events:
            seen[e.data["w"]].append(e.data["i"])
            assert e.data["pad"] == "y" * (e.data["i"] % 97), "torn event data"
    for w, got in seen.items():
        assert got == list(range(EVENTS)), f"writer {w}: events lost, doubled or reordered"
    rep = fresh.fsck()
    assert rep.ok, rep.damaged
    assert len(fresh.checkpoints()) >= 1
    t = tally(f"concurrency: {layout}")
    t.trials += 1
    t.finished += 1
    cps, gcs = (tmp_path / "checkpoints").read_text(), (tmp_path / "gcs").read_text()
    assert int(cps) > 0 and int(gcs) > 0, "checkpoints and gc did not overlap the writers"
    t.notes.append(f"{WRITERS * EVENTS} events in {elapsed:.1f} s beside {cps} checkpoints "
                   f"and {gcs} gc runs")
