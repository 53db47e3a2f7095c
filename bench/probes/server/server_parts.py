"""Instructions of one at-once ``turnback/createCheckpoint`` through the server, by part.

Where a request's instructions go outside ``Store.checkpoint_now``: the stdin read, the
JSON decode, pygls's dispatch, the handler's ``Params``, the watcher's flush, the answer's
encoding and write, and what the server does between an answer and the next request (the
stat cache's save, the fold, the watcher reading the next edits).

The server runs under callgrind (``--dump-before=os_access``) as ``server_parts.py
--serve MARKS``: the functions in ``PARTS`` wrapped with an ``os.access`` mark at entry and
exit (``callgrind_marks.py``), then ``turnback.server``'s ``main``. A request's phase
starts when its bytes reach the loop (asyncio's ``data_received`` on stdin) and ends when
its answer is written (``_send_body``); the phase "after" runs to the next request's bytes.
Callgrind counts each thread apart (``--separate-threads=yes``) and a dump holds the
marking thread's counts since its last dump, so each count is one thread's: the event
loop's (thread 1) or another's (the watcher's drains, the write pool's save and fold), each
with its own stack of marks. A thread that marks nothing (the followers', and the watcher's,
whose polls are not marked) is not counted.

    python bench/probes/server/server_parts.py --workspace WS --out OUT --rounds 12 [--plain]
    python bench/probes/server/server_parts.py --summarize OUT [--pool]

``WS``: a small workspace with a store (``gen_workspace.py WS --files 2000 --size-mb 12``;
a CLI checkpoint makes the store if missing); ``--plain``: only the phase marks and
``checkpoint_now``'s, for the request's instructions without the wrappers' own cost (~4 K a
mark). The summary gives the rounds the loop took the checkpoint itself (``shortwrite.py``)
apart from those it handed to the write pool (the watcher's thread was draining, say).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from callgrind_marks import RoundCounts, dump, instructions, wrap_part

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)

# (module, owner, attribute) wrapped in the server; the request's path outside the store,
# then the store's entry points and the work after the answer
PARTS = (
    ("turnback.server.transport.framing", None, "_header"),
    ("turnback.server.transport.framing", None, "_dispatch"),
    ("turnback.server.transport.wire", "TurnbackProtocol", "handle_message"),
    ("turnback.server.transport.wire", "TurnbackProtocol", "_handle_request"),
    ("pygls.protocol.json_rpc", "JsonRPCProtocol", "structure_message"),
    ("turnback.server.rpc.params", "Params", "__init__"),
    ("turnback.server.jobs.shortwrite", None, "certainly_short"),
    ("turnback.server.workspace.folders", "Folder", "open_store"),
    ("turnback.server.workspace.folders", None, "with_dirty"),
    ("turnback.server.watching.inotify_watch", "InotifyWatcher", "flush"),
    ("turnback.server.watching.inotify_watch", "InotifyWatcher", "drain"),
    ("turnback.server.watching.dirty", "DirtyTracker", "take"),
    ("turnback.store.session_ops", "SessionOps", "sessions_written"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "checkpoint_now"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "checkpoint"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "save_scan_cache"),
    ("turnback.store.facade", "Store", "fold_held"),
    ("turnback.server.workspace.listing", "ListingCache", "changed"),
    ("turnback.server.core", "TurnbackServer", "spawn"),
    ("turnback.server.core", "TurnbackServer", "announce"),
    ("turnback.models", "Checkpoint", "to_json"),
    ("turnback.server.transport.wire", "TurnbackProtocol", "_send_response"),
    ("turnback.server.transport.wire", None, "_plain_body"),
    ("turnback.server.transport.wire", "TurnbackProtocol", "_send_body"),
    ("pygls.io_", "StdoutWriter", "write"),
)


def serve(marks_path: Path, plain: bool) -> int:
    """The server, its parts marked; the marks written at its exit."""
    import asyncio.streams
    import threading

    marks: list[str] = []
    phase = ["idle"]
    lock = threading.Lock()

    def mark(name: str) -> None:
        if name.startswith("InotifyWatcher.drain") \
                and threading.current_thread() is not threading.main_thread():
            return  # its thread's polls, every 10-50 ms: dumps enough to slow a round 5x
        with lock:
            if phase[0] == "idle" and not name.startswith("phase:"):
                return
            marks.append(name)
            dump(name)

    def set_phase(name: str) -> None:
        mark("phase:" + name)
        phase[0] = name

    armed = [False]  # the at-once rounds have begun (the client's "arm" request)
    received = asyncio.streams.StreamReaderProtocol.data_received

    def data_received(self: Any, data: bytes) -> None:
        if armed[0] and phase[0] != "request":
            set_phase("request")
        received(self, data)

    asyncio.streams.StreamReaderProtocol.data_received = data_received  # type: ignore[method-assign]

    sys.argv = [sys.argv[0]]
    import turnback.server.app as app
    from turnback.server.transport import wire

    for modname, owner, attr in PARTS if not plain else PARTS[-12:-11]:
        wrap_part(importlib.import_module(modname), owner, attr, mark)
    sent = wire.TurnbackProtocol._send_body

    def send_body(self: Any, body: bytes) -> None:
        sent(self, body)
        if b'"label":"arm"' in body:
            armed[0] = True
        # the at-once answer itself (a notification or a log line may come before it)
        if phase[0] == "request" and b'"result"' in body and b'"label":"at once' in body:
            set_phase("after")

    wire.TurnbackProtocol._send_body = send_body  # type: ignore[method-assign]
    try:
        return app.main()
    finally:
        set_phase("idle")
        marks_path.write_text(json.dumps(marks))


def drive(a: argparse.Namespace) -> int:
    """The server under callgrind on ``a.workspace``: a walk, then the rounds."""
    sys.path.insert(0, str(HERE))
    from edits import Editor
    from turnback_side import Turnback

    a.out.mkdir(parents=True, exist_ok=True)
    tb = Turnback(a.workspace)
    if not tb.store.exists():
        tb.checkpoint_cli("first")
    tb.server_cmd = [
        "valgrind", "--tool=callgrind", "--dump-before=os_access", "--separate-threads=yes",
        f"--callgrind-out-file={a.out}/cg.out", sys.executable, str(Path(__file__).resolve()),
        "--serve", str(a.out / "marks.json"), *(["--plain"] if a.plain else [])]
    os.environ["PYTHONHASHSEED"] = "0"
    ed = Editor(tb.workspace, seed=a.seed)
    tb.start_server(3.0)
    tb.checkpoint_server("walk")
    time.sleep(2.0)
    ed.edit(10)
    time.sleep(2.0)
    tb.checkpoint_server("arm")  # the marks start after this answer
    time.sleep(2.0)
    for i in range(a.rounds):
        ed.edit(10)
        secs, _ = tb.checkpoint_server(f"at once {i}")
        print(f"round {i}: {secs * 1000:.0f} ms under callgrind", flush=True)
        time.sleep(a.quiet)
    tb.stop_server()
    return 0


def _thread_dumps(out: Path, count: int) -> dict[int, tuple[int, str]]:
    """``OUT/cg.out.N-TT`` by N: dump N holds what thread TT ran from its last mark to
    mark N."""
    files: dict[int, tuple[int, str]] = {}
    for p in out.glob("cg.out.*-*"):
        part, _, tid = p.name.rsplit(".", 1)[1].partition("-")
        if part.isdigit() and tid.isdigit():
            files[int(part)] = (int(tid), str(p))
    if len(files) < count:
        raise SystemExit(f"{len(files)} dumps for {count} marks: not this run's")
    return files


def summarize(out: Path, only: str = "loop") -> None:
    """Per phase and part: inclusive and own instructions a round (medians), over the
    rounds whose checkpoint ran on ``only`` ("loop" or "pool")."""
    paths: list[str] = []
    marks = json.loads((out / "marks.json").read_text())
    files = _thread_dumps(out, len(marks))
    counts: RoundCounts[tuple[str, str]] = RoundCounts()
    phase = "idle"
    stacks: dict[int, list[str]] = defaultdict(list)

    def close_round() -> None:
        path = "loop" if counts.called(("request", "CheckpointOps.checkpoint_now")) else "pool"
        paths.append(path)
        counts.close(keep=path == only)

    for k, m in enumerate(marks, start=1):
        tid, file = files[k]
        cost = instructions(file)  # what thread ``tid`` ran since its last mark
        stack = stacks[tid]
        where = "" if tid == 1 else f"[thread {tid}] "
        if phase in ("request", "after"):
            counts.charge(cost, stack, lambda label, ph=phase, w=where: (ph, w + label))
        if m.startswith("phase:"):
            new = m[6:]
            if new == "request" and phase == "after":
                close_round()
            phase = new  # a thread mid-call keeps its stack across phases
        elif m.endswith(">"):
            stack.append(m[:-1])
            counts.call((phase, where + m[:-1]))
        elif stack and stack[-1] == m[:-1]:
            stack.pop()
    n = paths.count(only)
    print(f"{len(paths)} rounds, {n} with the checkpoint on the {only}'s thread: {paths}")
    print("medians a round (instructions, thousands; the loop's thread unless named)")
    print(f"{'phase':8s} {'part':40s} {'calls':>6s} {'inclusive':>10s} {'own':>9s}")
    for ph in ("request", "after"):
        keys = [key for key in counts.incl if key[0] == ph]
        for key in sorted(keys, key=lambda key: -counts.median(counts.incl, key)):
            print(f"{ph:8s} {key[1]:40s} {counts.median(counts.calls, key):6.0f} "
                  f"{counts.median(counts.incl, key) / 1000:10.1f} "
                  f"{counts.median(counts.own, key) / 1000:9.1f}")


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--summarize"] and len(args) in (2, 3):
        summarize(Path(args[1]), "pool" if "--pool" in args else "loop")
        return 0
    if args[:1] == ["--serve"]:
        return serve(Path(args[1]), "--plain" in args)
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--quiet", type=float, default=3.0, help="seconds after each answer")
    ap.add_argument("--plain", action="store_true")
    return drive(ap.parse_args(args))


if __name__ == "__main__":
    sys.exit(main())
