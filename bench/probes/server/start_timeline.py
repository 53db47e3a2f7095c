"""Where a server's start goes, phase by phase: a timeline from its process start to its first
checkpoint's answer (issue 23's "one walk at start", branch start23b).

A copy of the package folder is made in a scratch folder (removed after) with one line added
at each phase's start or end (``__main__``: the fork, the code cache, the imports; ``app``;
``initialize``/``initialized``; a folder's opening; the checkpoint request, ``with_dirty``, the
store's snapshot, commit and stat cache save; the follower and the CLI socket), each writing
the seconds since the benchmark started the process (wall) and the process's own CPU seconds
to stderr. The copy is started as ``bench/probes/server/startup_walks.py`` starts a server,
initialized, and asked for one checkpoint at once; its timeline is printed.

    python bench/probes/server/start_timeline.py WORKSPACE [PACKAGE_FOLDER] [--rounds 3] \\
        [--env VAR=VALUE]

An anchor line the code no longer has is named ("missing: ..."): that phase is not timed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE))

from lsp_client import LspClient  # noqa: E402

PROBE = '''import os, sys, time
T0 = float(os.environ.get("TIMELINE_T0", "0"))
def mark(label: str) -> None:
    if T0:
        sys.stderr.write(f"TIMELINE {time.time() - T0:.3f} {time.process_time():.3f} {label}\\n")
        sys.stderr.flush()
'''

LC, CP = "server/features/lifecycle.py", "server/features/checkpoints.py"
# (file under turnback/, the anchor line, the probe line's label, "before" or "after" it)
POINTS = [
    ("server/__main__.py", "from .startwalk import begin\n", "main: start", "before"),
    ("server/__main__.py", "begin()  # before any thread", "forked (startwalk.begin)", "after"),
    ("server/__main__.py", "install()  # before pygls", "code cache installed (attrs, cattrs)",
     "after"),
    ("server/__main__.py", "from .app import main  # noqa: E402\n", "imports done", "after"),
    ("server/app.py", "    ls = create_server()\n", "server created (features, converter)",
     "after"),
    ("server/app.py", "        ls.start_io(", "serving stdio", "before"),
    (LC, "        loop = asyncio.get_running_loop()\n        ls.notifier",
     "initialize", "before"),
    (LC, "        uris = [f.uri for f in ls.workspace.folders",
     "initialized", "before"),
    (LC, "        ls.restart_watcher(folder)\n        await",
     "folder: watcher starts", "before"),
    (LC, "        if folder.store is not None:\n            log.info(\"%s: store",
     "folder: store looked for", "before"),
    (LC, "            ls.follow(folder)\n", "follower starts", "before"),
    (LC, "            await ls.serve_cli(folder)\n        except",
     "CLI socket served", "after"),
    (CP, "        p = Params(params, methods.CREATE_CHECKPOINT)",
     "createCheckpoint received", "before"),
    (CP, "        # A walk of the whole tree may take a while",
     "createCheckpoint: folder ready", "before"),
    ("server/workspace/folders.py",
     "    trusted, reason = folder.tracker.trusted, folder.tracker.reason",
     "with_dirty: watcher started", "before"),
    ("store/checkpoint_ops.py", "            res, skipped = self._snapshot(dirty, progress)\n",
     "checkpoint: locks held", "before"),
    ("store/checkpoint_ops.py", "            res, skipped = self._snapshot(dirty, progress)\n",
     "checkpoint: snapshot stored", "after"),
    ("store/checkpoint_ops.py", "            self.scanner.save_cache()\n            return cp\n",
     "checkpoint: committed", "before"),
    ("store/checkpoint_ops.py", "            return cp\n\n    def _snapshot",
     "checkpoint: stat cache saved", "before"),
    (CP, "        return {\n            \"checkpoint\": cp.to_json(),",
     "createCheckpoint: answering", "before"),
]


def instrument(src: Path, dst: Path) -> list[str]:
    """Copy the package folder ``src`` to ``dst`` with the probe lines; the anchors missing."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    pkg = dst / "turnback"
    (pkg / "_timeline.py").write_text(PROBE)
    missing = []
    for rel, anchor, label, where in POINTS:
        f = pkg / rel
        text = f.read_text()
        at = text.find(anchor)
        if at < 0:
            missing.append(f"{rel}: {label}")
            continue
        first = anchor.split("\n")[0]
        indent = first[: len(first) - len(first.lstrip())]
        up = "." * (rel.count("/") + 1)
        probe = f"{indent}from {up}_timeline import mark as _tl; _tl({label!r})\n"
        if where == "before":
            at = text.rfind("\n", 0, at) + 1
        else:
            at = text.find("\n", at + len(first)) + 1
        text = text[:at] + probe + text[at:]
        f.write_text(text)
    return missing


def one(ws: Path, code: Path, extra: dict[str, str], log: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(code), **extra}
    env.pop("TURNBACK_STORE", None)
    load = os.getloadavg()[0]
    t0 = time.time()
    env["TIMELINE_T0"] = repr(t0)
    # the server's stderr to ``log``: the probe lines and its own log
    cmd = ["sh", "-c", 'exec "$0" -m turnback.server 2>"$1"', sys.executable, str(log)]
    client = LspClient(cmd, cwd=ws, env=env)
    try:
        client.initialize(ws)
        init = time.time() - t0
        client.request("turnback/createCheckpoint", {})
        first = time.time() - t0
    finally:
        client.close()
    print(f"client: initialize answered {init:.3f} s, first checkpoint answered {first:.3f} s; "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print("   wall s   CPU s  phase")
    for line in log.read_text().splitlines():
        if line.startswith("TIMELINE "):
            _, wall, cpu, label = line.split(" ", 3)
            print(f"  {float(wall):7.3f} {float(cpu):7.3f}  {label}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("code", nargs="?", default=str(HERE.parent / "server"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--env", action="append", default=[], help="VAR=VALUE for the server")
    a = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in a.env)
    with tempfile.TemporaryDirectory(prefix="turnback-timeline-") as scratch:
        code = Path(scratch) / "server"
        for miss in instrument(Path(a.code).resolve(), code):
            print(f"missing: {miss}")
        for r in range(a.rounds):
            print(f"round {r + 1}", flush=True)
            one(a.workspace.resolve(), code, extra, Path(scratch) / "stderr.log")


if __name__ == "__main__":
    main()
