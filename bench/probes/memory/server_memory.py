"""The server's peak memory (VmHWM, the kernel's high-water mark of its resident set) through
what issue 23 names: 100 turns, a rewind of 10,000 files, the import of a 100 MB transcript.

    python bench/probes/memory/server_memory.py bench/work/srvmem [--files 10000] [--turns 100] \\
        [--mb 100]
        [--rewind 10000] [--transcript PATH] [--code server] [--workspace WS]

One server (``python -m turnback.server``, the package in ``--code``) on a workspace of
``--files`` small files made under the given folder (removed first), or on ``--workspace``
(a generated one: its text files are edited, and the rewind puts them back). Phases, in order, each
followed by the server's VmHWM (the peak since it started: so the figure after a phase is
the most it held at any moment up to there) and VmRSS:

1. start, and the first checkpoint (a full walk of the workspace);
2. ``--turns`` turns: 10 files edited, then a checkpoint;
3. ``--rewind`` files (spread over the workspace) edited and checkpointed, then a rewind to
   the first checkpoint (those files written back);
4. ``turnback/import`` of a Claude Code transcript of ``--mb`` MB, made from a real one
   (``--transcript``; default: the largest under /work/shared/transcripts/claude-code)
   repeated with fresh ids until it is that big (written under the given folder).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from lsp_client import LspClient

REPO = Path(__file__).resolve().parents[3]
SHARED = Path("/work/shared/transcripts/claude-code")
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def status(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) of ``pid`` in MB."""
    got = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            got[key] = int(value.split()[0]) // 1024
    return got["VmHWM"], got["VmRSS"]


def make_workspace(ws: Path, files: int) -> list[Path]:
    out = []
    for i in range(files):
        d = ws / f"pkg{i // 1000}" / f"mod{i // 50}"
        if i % 50 == 0:
            d.mkdir(parents=True, exist_ok=True)
        p = d / f"file{i}.py"
        p.write_text(f"# file {i}\n" + "x = 1\n" * (i % 20 + 1))
        out.append(p)
    return out


def make_transcript(src: Path, dest: Path, mb: int) -> int:
    """``src``'s lines again and again, every id made new each time, up to ``mb`` MB."""
    lines = src.read_bytes().splitlines(keepends=True)
    size, copy = 0, 0
    with dest.open("wb") as out:
        while size < mb << 20:
            tag = b"%08x" % copy
            for line in lines:
                new = _UUID.sub(lambda m, t=tag: t + m.group(0)[8:], line)
                out.write(new)
                size += len(new)
            copy += 1
    return size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("work", type=Path)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--rewind", type=int, default=10_000, help="files the rewind writes back")
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--transcript", type=Path)
    ap.add_argument("--code", type=Path, default=REPO / "server")
    ap.add_argument("--workspace", type=Path,
                    help="a generated workspace to use instead (bench/gen_workspace.py; its "
                         "store is removed first, its text files are the ones edited)")
    args = ap.parse_args()
    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if args.workspace is not None:
        from edits import text_files

        ws = args.workspace.resolve()
        shutil.rmtree(ws / ".turnback", ignore_errors=True)
        files = [ws / rel for rel in text_files(ws)]
    else:
        ws = work / "ws"
        ws.mkdir()
        files = make_workspace(ws, args.files)
    env = dict(os.environ, PYTHONPATH=str(args.code.resolve()))
    env.pop("TURNBACK_STORE", None)
    rows: list[tuple[str, float, int, int]] = []
    client = LspClient([sys.executable, "-m", "turnback.server"], cwd=ws, env=env)
    pid = client.proc.pid

    def phase(name: str, t0: float) -> None:
        hwm, rss = status(pid)
        rows.append((name, time.perf_counter() - t0, hwm, rss))
        print(f"{name}: {time.perf_counter() - t0:.1f} s, VmHWM {hwm} MB, VmRSS {rss} MB, "
              f"load {os.getloadavg()[0]:.1f}", flush=True)

    try:
        t0 = time.perf_counter()
        client.initialize(ws)
        first = client.request("turnback/createCheckpoint", {})
        phase(f"start + first checkpoint ({first['checkpoint'].get('files', len(files)):,} "
              "files)", t0)
        t0 = time.perf_counter()
        for turn in range(args.turns):
            for k in range(10):
                p = files[(turn * 10 + k) * 7 % len(files)]
                p.write_text(p.read_text() + f"# turn {turn}\n")
            client.request("turnback/createCheckpoint", {})
        phase(f"{args.turns} turns of 10 edited files", t0)
        t0 = time.perf_counter()
        step = max(1, len(files) // args.rewind)
        changed = files[::step][:args.rewind]
        for p in changed:
            p.write_text("# changed\n")
        client.request("turnback/createCheckpoint", {})
        got = client.request("turnback/rewind", {"checkpoint": first["checkpoint"]["id"]})
        phase(f"{len(changed):,} files changed, then a rewind of them", t0)
        print("  rewind:", len(got.get("written", [])), "written;", json.dumps(got)[-200:])
        src = args.transcript or max(SHARED.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        dest = work / "transcript.jsonl"
        size = make_transcript(src, dest, args.mb)
        t0 = time.perf_counter()
        out = client.request("turnback/import", {"source": "claude-code", "path": str(dest)},
                             timeout=3600)
        phase(f"import of a {size / 1e6:.0f} MB transcript", t0)
        print("  import:", json.dumps(out)[:300])
    finally:
        client.close()
    print("\n| phase | s | VmHWM MB | VmRSS MB |\n|---|---:|---:|---:|")
    for name, secs, hwm, rss in rows:
        print(f"| {name} | {secs:.1f} | {hwm} | {rss} |")


if __name__ == "__main__":
    main()
