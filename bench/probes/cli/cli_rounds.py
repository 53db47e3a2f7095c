"""The fresh CLI with no server (an agent's hook where no editor is open), for A/B runs.

Per round, for each package folder in turn (the order alternates from round to round):
a no-op ``turnback checkpoint``, and a rewind of 10 edited files by ``turnback rewind``
(the checkpoint it goes back to taken first, by the same CLI); each beside the shadow
git's ``add -A && commit`` and ``clean && reset --hard`` of the same state. Every
process is fresh, with no server anywhere; each rewind's result is checked byte for
byte. Prints the medians per package folder (wall time, and CPU time: ``...Cpu``),
with the load average before and after:

    python bench/probes/cli/cli_rounds.py --workspace bench/work/ws --rounds 8 --ref 0237c31 \\
        --ref work

``--ref work`` is this checkout's ``server/`` copied and byte-compiled (as an installed
package is: with ``PYTHONDONTWRITEBYTECODE`` set, the checkout itself would be compiled
again by every process). The workspace's store must be readable by every ref given.

``--background``: the CLI may leave a background server running (``cli/background.py``; off
otherwise, as "no server anywhere" means). Each round then first ends the server, and times
the call that starts it (``first``: it still walks, then spawns), the call after the server
is up (``second``: handed off; the server's first checkpoint walks, its watcher being new)
and, as before, a no-op and a rewind (handed off: the steady cost). ``readyS`` is from the
first call's start to the server answering; ``...ServerCpu`` the server's CPU time in a
call (/proc), which the CLI's own CPU time does not count. One ref only (the one whose CLI
starts the server).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
import turnback_side
from edits import Editor
from shadow_git import ShadowGit
from turnback_side import Turnback, use_ref

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def source_of(ref: str, work: Path) -> Path:
    """The package folder (``.../server``) a ref's processes import."""
    if ref != "work":
        use_ref(ref, work)
        assert turnback_side._SOURCE is not None
        return turnback_side._SOURCE
    dest = work / "src-work"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(HERE.parent / "server", dest / "server",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "server")], check=True,
                   stdout=subprocess.DEVNULL)
    return dest / "server"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--ref", action="append", default=[], help="a commit, or 'work' (repeat)")
    ap.add_argument("--background", action="store_true",
                    help="let the CLI leave a background server running (see above)")
    a = ap.parse_args(argv)
    refs = a.ref or ["work"]
    if a.background and len(refs) != 1:
        ap.error("--background takes one --ref")
    turnback_side.BACKGROUND = a.background
    sources = {ref: source_of(ref, HERE / "work") for ref in refs}
    tb = Turnback(a.workspace)
    git = ShadowGit(a.workspace.with_name(a.workspace.name + ".shadow.git"), a.workspace)
    if not git.git_dir.exists():
        git.init()
        git.checkpoint("first")
        git.wait_for_gc()
    turnback_side._SOURCE = sources[refs[0]]
    if not tb.store.exists():
        tb.checkpoint_cli("first")
    ed = Editor(tb.workspace, seed=int(time.time()))
    load0 = os.getloadavg()[0]
    s: dict[str, dict[str, list[float]]] = {
        r: {"noop": [], "noopCpu": [], "rewind": [], "rewindCpu": [], "gitNoop": [],
            "gitNoopCpu": [], "gitRewind": [], "gitRewindCpu": []} for r in refs}
    for i in range(a.rounds):
        for ref in refs if i % 2 == 0 else refs[::-1]:
            turnback_side._SOURCE = sources[ref]
            got = s[ref]
            if a.background:
                first_calls(got, tb, i)
            server_timed(got, "noop", tb.checkpoint_cli, f"no-op {i}", tb.store)
            timed(got, "gitNoop", lambda m: (git.checkpoint(m).seconds, None), f"no-op {i}")
            _, cp = tb.checkpoint_cli(f"base {i}")
            commit = git.checkpoint(f"base {i}").value
            changed = ed.edit(10)
            before = {p: _blob(git, commit, p) for p in changed}
            server_timed(got, "rewind", tb.rewind_cli, cp, tb.store)
            _check(a.workspace, before)
            ed.apply(changed)
            timed(got, "gitRewind", lambda c: (git.restore(c).seconds, None), commit)
            _check(a.workspace, before)
    if a.background:
        stop_server(tb.store)
    out = {r: {k: round(statistics.median(v) * 1000, 1) for k, v in got.items() if v}
           for r, got in s.items()}
    print(json.dumps({"load": [round(load0, 2), round(os.getloadavg()[0], 2)],
                      "rounds": a.rounds, "medianMs": out}))
    return 0


def timed(got: dict[str, list[float]], key: str, fn: Callable[[str], tuple[float, Any]],
          arg: str) -> None:
    """``fn(arg)``'s wall time under ``key``, and the CPU time (user and system) of the
    processes it ran under ``key + "Cpu"``: the CPU time moves far less with the load of
    a shared machine (a CLI's forked checker is counted: its parent waits for it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    got.setdefault(key, []).append(fn(arg)[0])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    got.setdefault(key + "Cpu", []).append(
        after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def first_calls(got: dict[str, list[float]], tb: Turnback, i: int) -> None:
    """With no server: the call that starts one, then the first call it takes."""
    stop_server(tb.store)
    t0 = time.perf_counter()
    timed(got, "first", tb.checkpoint_cli, f"first {i}")
    got.setdefault("readyS", []).append(wait_server(tb.store) - t0)
    server_timed(got, "second", tb.checkpoint_cli, f"second {i}", tb.store)


def server_timed(got: dict[str, list[float]], key: str,
                 fn: Callable[[str], tuple[float, Any]], arg: str, store: Path) -> None:
    """``timed``, and the background server's CPU time in the call (if one runs)."""
    pid = server_pid(store)
    before = proc_cpu(pid)
    timed(got, key, fn, arg)
    after = proc_cpu(pid)
    if before is not None and after is not None:
        got.setdefault(key + "ServerCpu", []).append(after - before)


def server_pid(store: Path) -> int | None:
    """The background server's pid, from its lock file (``store/background_lock.py``)."""
    import fcntl

    try:
        with open(store / "run" / "background.lock", "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return None  # nobody holds it: the pid in it is a server that ended
            except BlockingIOError:
                raw = f.read(20).strip()
    except OSError:
        return None
    return int(raw) if raw.isdigit() else None


def proc_cpu(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_server(store: Path, timeout: float = 120.0) -> float:
    """Until the background server answers on its socket; the moment it did."""
    deadline = time.monotonic() + timeout
    path = str(store / "run" / "cli.sock")
    while time.monotonic() < deadline:
        if server_pid(store) is not None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                try:
                    c.connect(path)
                    return time.perf_counter()
                except OSError:
                    pass
        time.sleep(0.005)
    raise SystemExit("no background server came up")


def stop_server(store: Path) -> None:
    pid = server_pid(store)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    while Path(f"/proc/{pid}").exists() and not _zombie(pid):
        time.sleep(0.01)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def _blob(git: ShadowGit, commit: str, rel: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git.git_dir}", "cat-file", "blob",
                           f"{commit}:{rel}"], capture_output=True, check=True).stdout


def _check(ws: Path, expected: dict[str, bytes]) -> None:
    for rel, data in expected.items():
        if (ws / rel).read_bytes() != data:
            raise SystemExit(f"{rel} was not restored")


if __name__ == "__main__":
    sys.exit(main())
