"""Big workspaces: memory, time and inotify watches against the workspace's size (issues 23, 16).

For each size (files outside ``node_modules/``; an ignored ``node_modules/`` of 40% more
files) it generates a workspace under ``--work`` (up to 50,000 files: one package per 10
files, about five folders each, SPEC's folders; from 500,000 files the issue's "deeper tree":
21,000 folders per 500,000 files, nested up to 8 deep, one package per 100 files), then measures, as
separate processes so each peak RSS (``/usr/bin/time -f %M``) is that step's alone:

- Turnback's first ``turnback checkpoint`` (CLI, fresh store), the one after it (``noop``:
  nothing changed, the first to look up the stat cache) and a later no-op (``later``);
- the shadow git's first ``git add -A`` + ``git commit`` and two no-op ones (same run,
  interleaved: same machine load);
- the server on that store (``python -m turnback.server``): started, ready and its first
  checkpoint (``srv_start_s``, against the CLI's ``tb_later_s``), a no-op checkpoint 5 s
  later (``srv_warm_ms``), the median of 20 more (``srv_steady_ms``); then ``--rounds``
  rounds of 10 files edited, 0.3 s for the watcher, a server checkpoint (``srv_edit10_ms``,
  the median) beside git's ``add -A`` + ``commit`` of the same (``git_edit10_s``), and both
  stores' sizes after them (``tb_store_mb``: ``.turnback`` without its caches, as
  ``bench/run.py``; ``git_store_mb``: the git dir, no gc); its VmHWM (the peak resident set
  at any moment since it started) and VmRSS after all that;
- the Linux watcher's inotify watches on that workspace (workspace, store and git's
  ``info/``) against its folders that are not ignored, and the portable watchfiles
  watcher's on the same workspace (it watches every folder, ignored ones too: what the
  server held before; skipped past ``--watchfiles-max`` folders).

Disk, said up front: the workspace (``du``) and the two stores: 5k ≈ 70 MB, 50k ≈ 0.7 GB,
500k ≈ 5.5 GB + 2.5 GB, and ``--million`` (1,000,000 files, the same deeper layout) about
17 GB free (measured: 8.6 GB of workspace, 2.5 GB of store, 5.6 GB of git dir). Each
workspace is deleted when its row is done, unless ``--keep`` (then a kept one of the same
parameters is used again: generating 500,000 files takes minutes). Writes ``--out``
(``bench/results_monorepo.json``); the figure: ``--plot bench/monorepo.png``.

    python bench/probes/memory/monorepo.py                 # 5k, 50k
    python bench/probes/memory/monorepo.py --sizes 5000 50000 500000 --work /work/benchdata --keep
    python bench/probes/memory/monorepo.py --million       # and 1,000,000 (about 17 GB of disk)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
REPO = HERE.parent
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(HERE))

from shadow_git import ShadowGit  # noqa: E402


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int]:
    """(seconds, peak RSS in MB) of one command."""
    t0 = time.perf_counter()
    res = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], cwd=cwd, env=env,
                         capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
    rss_kb = int(res.stderr.strip().splitlines()[-1])
    return elapsed, round(rss_kb / 1024)


def folders(ws: Path) -> tuple[int, int]:
    """(folders not ignored, every folder) below ``ws``; .git and .turnback excluded."""
    from turnback.snapshot.ignore import IgnoreRules

    rules = IgnoreRules(ws, ws / ".turnback", [])
    kept = every = 0
    stack: list[tuple[str, bool]] = [("", False)]
    while stack:
        rel, ignored = stack.pop()
        every += 1
        kept += not ignored
        with os.scandir(ws / rel if rel else ws) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False) and e.name not in (".git", ".turnback"):
                    child = f"{rel}/{e.name}" if rel else e.name
                    stack.append((child, ignored or rules.in_dir(rel, child, e.name, True)))
    return kept, every


def _inotify_watches() -> int:
    """Inotify watches this process holds (its descriptors' ``fdinfo``)."""
    n = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        n += text.count("inotify wd:")
    return n


def watches(ws: Path, kind: str) -> int:
    """The inotify watches a watcher (``inotify``: Turnback's Linux one; ``watchfiles``: the
    portable one) holds on ``ws``, counted from the kernel's side."""
    from turnback.server.watching.dirty import DirtyTracker
    from turnback.server.watching.inotify_watch import InotifyWatcher
    from turnback.server.watching.watch import FolderWatcher

    before = _inotify_watches()
    cls = InotifyWatcher if kind == "inotify" else FolderWatcher
    w = cls(ws, ws / ".turnback", DirtyTracker(), lambda s, c: None)
    w.start()
    try:
        if not w.wait_ready(300):
            raise RuntimeError("the watcher did not start")
        if kind == "watchfiles":
            w.flush(30)  # its watches are all set once it delivers an event
        return _inotify_watches() - before
    finally:
        w.stop()


def server(ws: Path, env: dict[str, str], add: list[str], commit: list[str], rounds: int
           ) -> dict[str, Any]:
    """The server on the existing store: ready and first checkpoint (the start-up walk), a
    no-op checkpoint 5 s later (warm: incremental), then 20 more (steady state); ``rounds``
    of 10 files edited (server checkpoint beside git's add + commit) and both stores' sizes;
    its VmHWM (peak resident set since it started) and VmRSS at the end."""
    from edits import Editor
    from lsp_client import LspClient
    from server_memory import status
    from shadow_git import dir_size

    out: dict[str, Any] = {"serverLoadAvg": os.getloadavg()[0]}
    t0 = time.perf_counter()
    client = LspClient([sys.executable, "-m", "turnback.server"], cwd=ws, env=env)
    try:
        client.initialize(ws)
        client.request("turnback/createCheckpoint", {})
        out["srv_start_s"] = round(time.perf_counter() - t0, 3)
        time.sleep(5)  # the "warm 5 s later"
        t1 = time.perf_counter()
        client.request("turnback/createCheckpoint", {})
        out["srv_warm_ms"] = round((time.perf_counter() - t1) * 1000, 1)
        xs = []
        for _ in range(20):
            t1 = time.perf_counter()
            client.request("turnback/createCheckpoint", {})
            xs.append((time.perf_counter() - t1) * 1000)
        out["srv_steady_ms"] = round(sorted(xs)[len(xs) // 2], 1)  # the median
        out["srv_hwm_start_mb"] = status(client.proc.pid)[0]
        if rounds:
            editor, tb, gs = Editor(ws), [], []
            out["roundsLoadAvg"] = os.getloadavg()[0]
            for _ in range(rounds):
                editor.edit(10)
                time.sleep(0.3)  # for the watcher to see them (bench/run.py's --settle)
                t1 = time.perf_counter()
                client.request("turnback/createCheckpoint", {})
                tb.append((time.perf_counter() - t1) * 1000)
                t1 = time.perf_counter()
                subprocess.run([*add, "add", "-A"], cwd=ws, check=True)
                subprocess.run(commit, cwd=ws, check=True)
                gs.append(time.perf_counter() - t1)
            out["srv_edit10_ms"] = round(sorted(tb)[len(tb) // 2], 1)
            out["git_edit10_s"] = round(sorted(gs)[len(gs) // 2], 3)
            store = ws / ".turnback"
            caches = sum(dir_size(store / d)["apparent"] for d in ("index", "cache")
                         if (store / d).exists())
            out["tb_store_mb"] = round((dir_size(store)["apparent"] - caches) / 2**20, 1)
            out["tb_store_caches_mb"] = round(caches / 2**20, 1)
            gitdir = Path(add[1].partition("=")[2])
            out["git_store_mb"] = round(dir_size(gitdir)["apparent"] / 2**20, 1)
        out["srv_hwm_mb"], out["srv_rss_mb"] = status(client.proc.pid)
    finally:
        client.close()
    return out


def layout(files: int) -> list[str]:
    """``gen_workspace.py``'s options for a size (see the module's docstring)."""
    nm = ["--node-modules-files", str(round(files * 0.4))]
    if files < 500_000:
        return [*nm, "--node-modules-packages", str(max(1, files // 10))]
    return [*nm, "--node-modules-packages", str(files // 100), "--folders",
            str(files * 21 // 500), "--depth", "8"]


def one_size(files: int, work: Path, code: Path, keep: bool, rounds: int,
             watchfiles_max: int) -> dict[str, Any]:
    ws = work / f"mono-{files}"
    gitdir = work / f"mono-{files}.git"
    params = work / f"mono-{files}.params"
    opts = ["--files", str(files), *layout(files)]
    reuse = keep and ws.exists() and params.exists() and params.read_text() == " ".join(opts)
    for p in (ws, gitdir) if not reuse else (ws / ".turnback", gitdir):
        if p.exists():
            shutil.rmtree(p)
    t0 = time.perf_counter()
    if not reuse:
        params.unlink(missing_ok=True)
        subprocess.run([sys.executable, str(HERE / "gen_workspace.py"), str(ws), *opts],
                       check=True, capture_output=True)
        params.write_text(" ".join(opts))
    row: dict[str, Any] = {"files": files, "ignoredFiles": round(files * 0.4),
                           "generateS": None if reuse else round(time.perf_counter() - t0, 1)}
    row["foldersKept"], row["foldersAll"] = folders(ws)
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("TURNBACK_STORE", None)
    # the CLI rows are the CLI's own work: no background server left by one call to take
    # the next (since daemon16 a call that no server took starts one); the server rows below
    # start theirs
    env["TURNBACK_BACKGROUND"] = "0"
    cli = [sys.executable, "-m", "turnback.cli.main", "checkpoint", "-m", "bench"]
    git = ShadowGit(gitdir, ws)
    git.init()
    add = ["git", f"--git-dir={gitdir}", f"--work-tree={ws}"]
    # no automatic gc: it would run on after the commit, detached, and load the next row
    commit = [*add, "-c", "gc.auto=0", "commit", "-q", "--allow-empty", "--no-verify", "-m",
              "bench"]
    for phase in ("first", "noop", "later"):
        row[f"{phase}LoadAvg"] = os.getloadavg()[0]
        row[f"tb_{phase}_s"], row[f"tb_{phase}_mb"] = timed(cli, ws, env)
        s1, m1 = timed([*add, "add", "-A"], ws)
        s2, m2 = timed(commit, ws)
        row[f"git_{phase}_s"], row[f"git_{phase}_mb"] = round(s1 + s2, 3), max(m1, m2)
        row[f"tb_{phase}_s"] = round(row[f"tb_{phase}_s"], 3)
    row.update(server(ws, env, add, commit, rounds))
    row["watches"] = watches(ws, "inotify")
    row["watchesWatchfiles"] = (watches(ws, "watchfiles") if row["foldersAll"] <= watchfiles_max
                                else None)
    shutil.rmtree(gitdir, ignore_errors=True)
    if keep:
        shutil.rmtree(ws / ".turnback", ignore_errors=True)
    else:
        shutil.rmtree(ws, ignore_errors=True)
        params.unlink(missing_ok=True)
    return row


def plot(results: dict[str, Any], png: Path) -> None:
    """Peak RSS and time of the first and no-op checkpoints against the workspace's size."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write the file only
    import matplotlib.pyplot as plt

    rows = sorted(results["rows"], key=lambda r: r["files"])
    xs = [r["files"] for r in rows]
    fig, (mem, secs) = plt.subplots(1, 2, figsize=(11, 4.2))
    for side, label, color in (("tb", "Turnback (CLI)", "tab:blue"),
                               ("git", "shadow git", "tab:red")):
        for phase, style in (("first", "-o"), ("noop", "--s")):
            mem.plot(xs, [r[f"{side}_{phase}_mb"] for r in rows], style, color=color,
                     label=f"{label}, {'first' if phase == 'first' else 'next (no-op)'}")
            secs.plot(xs, [r[f"{side}_{phase}_s"] for r in rows], style, color=color,
                      label=f"{label}, {'first' if phase == 'first' else 'next (no-op)'}")
    mem.plot(xs, [r["srv_hwm_mb"] for r in rows], ":^", color="tab:green",
             label="Turnback server, VmHWM")
    for ax, what in ((mem, "peak RSS (MB)"), (secs, "time (s)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("files (not ignored)")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
    mem.legend(fontsize=8)
    fig.suptitle(f"checkpoints against workspace size (commit {results['commit']})")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def table(rows: list[dict[str, Any]]) -> str:
    """What RESULTS.md shows of each size (issue 23's figures and issue 16's big rows)."""
    out = ["| files (+ ignored) | folders kept / all | inotify watches | first: Turnback / git "
           "| next: Turnback / git | later no-op: Turnback / git | first, time: Turnback / git "
           "| CLI no-op, time: Turnback / git | server: start + first cp | warm no-op 5 s later "
           "| steady no-op | 10 files: server / git | store after first + rounds: Turnback / "
           "git | server VmHWM |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        rounds = (f"{r['srv_edit10_ms']:.0f} ms / {r['git_edit10_s'] * 1000:.0f} ms | "
                  f"{r['tb_store_mb']:,.0f} MB / {r['git_store_mb']:,.0f} MB"
                  if "srv_edit10_ms" in r else "— | —")
        out.append(
            f"| {r['files']:,} (+{r['ignoredFiles']:,}) | {r['foldersKept']:,} / "
            f"{r['foldersAll']:,} | {r['watches']:,} | {r['tb_first_mb']} MB / "
            f"{r['git_first_mb']} MB | {r['tb_noop_mb']} MB / {r['git_noop_mb']} MB | "
            f"{r['tb_later_mb']} MB / {r['git_later_mb']} MB | {r['tb_first_s']:.1f} s / "
            f"{r['git_first_s']:.1f} s | {r['tb_later_s']:.2f} s / {r['git_later_s']:.2f} s | "
            f"{r['srv_start_s']:.2f} s | {r['srv_warm_ms']:.0f} ms | "
            f"{r['srv_steady_ms']:.1f} ms | {rounds} | {r['srv_hwm_mb']} MB |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    ap.add_argument("--million", action="store_true",
                    help="add 1,000,000 files (needs about 17 GB of free disk)")
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--keep", action="store_true",
                    help="keep each generated workspace, and use a kept one again")
    ap.add_argument("--rounds", type=int, default=100,
                    help="rounds of 10 edited files through the server (0: none)")
    ap.add_argument("--watchfiles-max", type=int, default=60_000,
                    help="count the watchfiles watcher's watches up to this many folders")
    ap.add_argument("--out", type=Path, default=HERE / "results_monorepo.json")
    ap.add_argument("--code", type=Path, default=REPO / "server",
                    help="the turnback package's folder the CLI runs (default: this checkout's)")
    ap.add_argument("--plot", type=Path, default=None,
                    help="only draw RESULTS' figure from --out's JSON into this PNG")
    a = ap.parse_args(argv)
    if a.plot is not None:
        plot(json.loads(a.out.read_text()), a.plot)
        return 0
    sys.path.insert(0, str(a.code.resolve()))  # the in-process watcher too
    sizes = [*a.sizes, *([1_000_000] if a.million else [])]
    a.work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True, check=False).stdout.strip()
    rows = []
    for n in sizes:
        row = one_size(n, a.work, a.code.resolve(), a.keep, a.rounds, a.watchfiles_max)
        print(json.dumps(row), flush=True)
        rows.append(row)
        a.out.write_text(json.dumps({"commit": commit, "rows": rows}, indent=1) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
