"""Turnback against a shadow git repository, in one run on the same workspace.

Prints each figure of SPEC's table with its ratio and writes them as JSON
(``--out``). Both tools start from an empty store; every checkpoint taken on
one side is taken on the other in the same workspace state, so the two stores
hold the same history (plus Turnback's rewind safety checkpoints).

    python bench/gen_workspace.py bench/work/ws            # once (about a minute)
    python bench/run.py --workspace bench/work/ws

Phases, in order (the server is stopped for every "cold" figure):
 1. first checkpoint (CLI) vs ``git add -A && git commit``; git's detached auto gc is awaited
 2. server start; 100 rounds of "edit 10 files, wait, checkpoint" (server vs git); store sizes
 3. no-op checkpoints through the server, and the bytes they add
 4. cold: no-op and 10-file checkpoints by a fresh CLI process and a fresh ``Store.open``
 5. rewind of 10 changed files: CLI and server vs ``git clean -fd && git reset --hard``
 6. at once: the server's 10-file checkpoints and rewinds asked for right after the edits,
    with no quiet moment for it to read them ahead (see server/turnback/server/jobs/prepare.py),
    once git's background gc is done; the server's CPU of each checkpoint is kept too
 7. the sweep for the plot: 1 .. 10,000 changed files, server (after a quiet moment and at
    once), CLI and git
 8. the hook path: what an agent's hook runs, a fresh ``turnback`` process, while a server
    serves the store (it hands the request over its socket: server/turnback/cli/handoff.py);
    no-op checkpoints interleaved with the same process told to work alone
    (``TURNBACK_HANDOFF=0``), 10-file checkpoints and rewinds asked at once
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from edits import Editor
from gen_workspace import MARKER
from server_bench import cpu_ns, user_sys_ticks
from shadow_git import ShadowGit, dir_size
from turnback_side import Turnback, use_ref

HERE = Path(__file__).resolve().parent


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        mem = int(Path("/proc/meminfo").read_text().split()[1]) * 1024
    disk = subprocess.run(["df", "-hT", str(HERE)], capture_output=True, text=True).stdout.strip()
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memBytes": mem,
        "disk": disk.splitlines()[-1] if disk else "?",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": git,
    }


def workspace_counts(ws: Path) -> dict[str, int]:
    """Files, bytes and folders outside ``node_modules/`` and the store; files inside it."""
    c = {"files": 0, "bytes": 0, "folders": 0, "ignoredFiles": 0}
    for dirpath, dirnames, filenames in os.walk(ws):
        rel = os.path.relpath(dirpath, ws)
        top = rel.split(os.sep, 1)[0]
        if top == ".turnback":
            dirnames[:] = []
            continue
        if top == "node_modules":
            c["ignoredFiles"] += len(filenames)
            continue
        c["folders"] += len([d for d in dirnames if d not in ("node_modules", ".turnback")])
        c["files"] += len(filenames) + len(
            [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        )
        c["bytes"] += sum(os.lstat(os.path.join(dirpath, f)).st_size for f in filenames)
    return c


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []  # a folder the rewind removed


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.ws: Path = args.workspace.resolve()
        self.git = ShadowGit(
            args.git_dir or self.ws.with_name(self.ws.name + ".shadow.git"), self.ws
        )
        self.tb = Turnback(self.ws, python=args.python)
        self.results: dict[str, Any] = {
            "machine": machine(),
            "args": {k: str(v) for k, v in vars(args).items()},
            "load": [],
            "figures": {},
            "samples": {},
            "notes": [],
        }
        self.n = 0
        self._edited = False  # edits made since the last Turnback request (``edit``)

    # -- helpers ----------------------------------------------------------------------------
    def label(self, what: str) -> str:
        self.n += 1
        return f"bench {self.n}: {what}"

    def load(self, phase: str) -> None:
        one, five, _ = os.getloadavg()
        self.results["load"].append({"phase": phase, "load1": one, "load5": five})
        print(f"-- {phase} (load {one:.2f}, {five:.2f})", flush=True)

    def sample(self, key: str, value: float) -> None:
        self.results["samples"].setdefault(key, []).append(value)

    def both_checkpoint(
        self, via: Callable[[str], tuple[float, str]], tb_key: str, git_key: str,
        after_tb: Callable[[], object] | None = None,
    ) -> str:
        """One Turnback checkpoint (by ``via``) and one git checkpoint of the same state;
        ``after_tb`` runs between the two."""
        lab = self.label(tb_key)
        if not self._edited:
            self.flush_disk()  # no edits of this round: nothing of the round's own is unsynced
        secs, cp = via(lab)
        self._edited = False
        self.sample(tb_key, secs)
        if after_tb is not None:
            after_tb()
        self.sample(git_key, self.git.checkpoint(lab).seconds)
        return cp

    def flush_disk(self) -> None:
        """Write back what the last requests left unsynced, before a round begins. Git's
        commit rewrites its index (~5 MB for 50,000 files) and writes objects without a
        sync; the next Turnback request's one ``fdatasync`` then waited for their writeback
        too (ext4 commits its journal with them): the at-once checkpoint 21.4 ms against
        12.1 ms with a sync first, the same 10.2-10.5 ms of server CPU (bench/RESULTS.md,
        "the at-once rows after git's writeback"). A user's own edits stay unsynced, as in
        use: the sync comes before them. ``--no-flush``: as before."""
        if not self.args.no_flush:
            os.sync()

    def edit(self, k: int) -> dict[str, bytes]:
        """A round's edits of ``k`` files, after ``flush_disk``."""
        self.flush_disk()
        self._edited = True
        return self.editor.edit(k)

    def wait_gc(self, phase: str) -> None:
        waited = self.git.wait_for_gc()
        if waited > 0.3:
            self.results["notes"].append(
                f"waited {waited:.1f}s for git's background auto gc after {phase}"
            )
            print(f"   git auto gc ran in the background: waited {waited:.1f}s", flush=True)

    def sizes(self, key: str) -> None:
        self.results["figures"][key] = {"turnback": dir_size(self.tb.store), "git": self.git.size()}

    def settle(self, k: int) -> None:
        """Give the server's watcher time to see ``k`` edits (about 300 ms for a few)."""
        time.sleep(self.args.settle + k * 0.0002)

    # -- phases -----------------------------------------------------------------------------
    def prepare(self) -> None:
        if not (self.ws / MARKER).exists():
            raise SystemExit(
                f"{self.ws} is not a generated workspace: run bench/gen_workspace.py {self.ws}"
            )
        self.tb.reset_store()
        if self.git.git_dir.exists():
            shutil.rmtree(self.git.git_dir)
        self.git.init()
        self.editor = Editor(self.ws, seed=self.args.seed)
        self.results["workspace"] = workspace_counts(self.ws)
        # Warm the page cache once for both tools: neither gets a cold disk the other did not.
        t0 = time.perf_counter()
        subprocess.run(
            ["find", str(self.ws), "-path", f"{self.ws}/node_modules", "-prune", "-o",
             "-type", "f", "-exec", "cat", "{}", "+"],
            stdout=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        print(f"   page cache warmed in {time.perf_counter() - t0:.1f}s", flush=True)

    def first(self) -> None:
        self.load("first checkpoint")
        self.flush_disk()  # ``prepare`` removed the last run's shadow repository, unsynced
        secs, self.first_cp = self.tb.checkpoint_cli(self.label("first"))
        self.sample("first.turnback", secs)
        g = self.git.checkpoint(self.label("first"))
        self.sample("first.git", g.seconds)
        print(f"   turnback {secs:.2f}s, git {g.seconds:.2f}s", flush=True)
        self.wait_gc("the first checkpoint")
        self.sizes("size.first")

    def rounds(self) -> None:
        self.load("server start + 100 rounds of 10 changed files")
        server = not self.args.no_server
        if server:
            start = self.tb.start_server(self.args.server_settle)
            self.results["figures"]["serverStart.workspace"] = start
        for i in range(self.args.rounds):
            self.edit(10)
            if server:
                self.settle(10)
                key = "edit10.warm.first" if i == 0 else "edit10.warm"
                self.both_checkpoint(self.tb.checkpoint_server, key, "edit10.git")
            else:
                self.both_checkpoint(self.tb.checkpoint_cli, "edit10.cold", "edit10.git")
            if (i + 1) % 20 == 0:
                print(f"   round {i + 1}", flush=True)
        self.wait_gc("the rounds")
        self.sizes("size.after100")

    def noop_warm(self) -> None:
        self.load("no-op checkpoints, server running")
        server = not self.args.no_server
        before_tb = dir_size(self.tb.store)["apparent"]
        before_hist = self._history_bytes()
        before_git = self.git.size()["apparent"]
        reps = self.args.noop_reps
        for _ in range(reps):
            if server:
                time.sleep(self.args.settle)
                self.both_checkpoint(self.tb.checkpoint_server, "noop.warm", "noop.git")
            else:
                self.both_checkpoint(self.tb.checkpoint_cli, "noop.cold", "noop.git")
        self.results["figures"]["noopBytes"] = {
            "turnback": (self._history_bytes() - before_hist) / reps,
            "turnbackWithCaches": (dir_size(self.tb.store)["apparent"] - before_tb) / reps,
            "git": (self.git.size()["apparent"] - before_git) / reps,
        }
        self.tb.stop_server()

    def _history_bytes(self) -> int:
        """The store's apparent size minus its caches (``index/``, ``cache/``: rebuilt on
        demand, rewritten rather than grown, so they may shrink as well as grow; see
        docs/FORMAT.md)."""
        total = dir_size(self.tb.store)["apparent"]
        for sub in ("index", "cache"):
            if (self.tb.store / sub).exists():
                total -= dir_size(self.tb.store / sub)["apparent"]
        return total

    def cold(self) -> None:
        self.load("cold checkpoints (no server)")
        for _ in range(self.args.repeat):
            self.both_checkpoint(self.tb.checkpoint_cli, "noop.cold", "noop.git")
        for _ in range(self.args.repeat):
            lab = self.label("noop api")
            self.flush_disk()  # git's commit of the last pair, as ``both_checkpoint`` does
            secs, inner = self.tb.checkpoint_api(lab)
            self.sample("noop.api", secs)
            self.sample("noop.api.call", float(inner["call"]))
            self.sample("noop.api.import", float(inner["import"]))
            self.sample("noop.git", self.git.checkpoint(lab).seconds)
        for _ in range(self.args.repeat):
            self.edit(10)
            self.both_checkpoint(self.tb.checkpoint_cli, "edit10.cold", "edit10.git")

    def rewind(self) -> None:
        self.load("rewind of 10 changed files")
        for server in (False, True)[: 1 if self.args.no_server else 2]:
            if server:
                self.tb.start_server(self.args.server_settle)
            for _ in range(self.args.repeat):
                self._rewind_round(server, settle=server, key="rewind.server" if server
                                   else "rewind.cli", git_key="rewind.git")
        self.tb.stop_server()

    def atonce(self) -> None:
        """As rounds and rewind, but each request follows the edits at once: the server
        has had no quiet moment to read the changed files ahead."""
        self.load("10 changed files, asked at once")
        if self.args.no_server:
            return
        self.tb.start_server(self.args.server_settle)
        self.both_checkpoint(self.tb.checkpoint_server, "serverFirst", "noop.git")
        # from a fresh shadow repository (this phase alone) that pair is git's first commit,
        # whose 50,000 loose objects start a detached ``git gc --auto``: on two cores it
        # took the other core through every round (bench/RESULTS.md, "the at-once
        # checkpoint's CPU"), so both tools' requests are timed once it is done
        self.wait_gc("the at-once phase's first checkpoints")
        pid = self.tb.server_pid()
        gc_rounds = 0
        for _ in range(self.args.atonce_rounds):
            gc_rounds += self.git.gc_running()
            self.edit(10)
            # the server's CPU from the request's sending to its answer, as server_rounds.py
            # counts it: the same request's cost whatever ran before it (here: git)
            used = partial(self._server_cpu, pid, "edit10.atonce", cpu_ns(pid),
                           cpu_ns(pid, only=pid), user_sys_ticks(pid))
            self.both_checkpoint(self.tb.checkpoint_server, "edit10.atonce", "edit10.git.atonce",
                                 after_tb=used)
        s = self.results["samples"]
        user = sum(s["edit10.atonce.serverUserTicks"])
        system = sum(s["edit10.atonce.serverSysTicks"])
        print(f"   at once: the server's CPU in clock ticks over {self.args.atonce_rounds} "
              f"requests: user {user:.0f}, system {system:.0f} "
              f"({100 * system / max(user + system, 1):.0f}% system)", flush=True)
        print(f"   at once: wall {median(s['edit10.atonce']) * 1000:.1f} ms, the server's CPU "
              f"{median(s['edit10.atonce.serverCpu']) * 1000:.2f} ms (its loop's "
              f"{median(s['edit10.atonce.loopCpu']) * 1000:.2f}), medians; git's gc ran "
              f"in {gc_rounds} of {self.args.atonce_rounds} rounds", flush=True)
        if gc_rounds:
            self.results["notes"].append(f"git's background gc ran during {gc_rounds} "
                                         "at-once rounds")
        for _ in range(self.args.repeat):
            self._rewind_round(True, settle=False, key="rewind.atonce",
                               git_key="rewind.git.atonce")
        self.tb.stop_server()

    def _server_cpu(self, pid: int, key: str, was: int, loop_was: int,
                    ticks_were: tuple[int, int] | None = None) -> None:
        """The server's CPU (every thread's; its event loop's) since ``was`` / ``loop_was``;
        with ``ticks_were``, its user and system clock ticks since (summed by the caller:
        a request is about one tick, ``user_sys_ticks``)."""
        self.sample(f"{key}.serverCpu", (cpu_ns(pid) - was) / 1e9)
        self.sample(f"{key}.loopCpu", (cpu_ns(pid, only=pid) - loop_was) / 1e9)
        if ticks_were is not None:
            user, system = user_sys_ticks(pid)
            self.sample(f"{key}.serverUserTicks", float(user - ticks_were[0]))
            self.sample(f"{key}.serverSysTicks", float(system - ticks_were[1]))

    def _rewind_round(self, server: bool, *, settle: bool, key: str, git_key: str) -> None:
        """Checkpoint, edit 10 files, rewind (after the watcher's settle time or at once);
        then the same edit again and git's restore. Both results are checked byte for byte."""
        via = self.tb.checkpoint_server if server else self.tb.checkpoint_cli
        cp = self.both_checkpoint(via, "rewind.base", "rewind.base.git")
        commit = self.git.git("rev-parse", "HEAD").stdout.strip()
        changed = self.edit(10)
        before = {p: self._original(p, commit) for p in changed}
        if settle:
            self.settle(10)
        secs, _ = self.tb.rewind_server(cp) if server else self.tb.rewind_cli(cp)
        self._edited = False  # a Turnback request: git's restore comes next, unsynced
        self.sample(key, secs)
        self._check(before, "turnback rewind")
        self._wait_released(changed)
        self.editor.apply(changed)
        self.sample(git_key, self.git.restore(commit).seconds)
        self._check(before, "git reset --hard")
        if server:
            self.settle(10)

    def _wait_released(self, changed: dict[str, bytes]) -> None:
        """Wait until the rewind's second names (``.turnback-tmp-…``, released by the server
        after its answer) are gone from the changed files' folders: git's ``clean -fd`` next
        lists a folder, and a name the release removes between its listing and its ``lstat``
        stops it ("fatal: Cannot lstat"). Not timed: the answer's time is taken already."""
        folders = {(self.ws / rel).parent for rel in changed}
        deadline = time.monotonic() + 30
        while any(n.startswith(".turnback-tmp-") for d in folders for n in _names(d)):
            if time.monotonic() > deadline:
                raise SystemExit("the rewind's second names were still there after 30 s")
            time.sleep(0.005)

    def _original(self, rel: str, commit: str) -> bytes:
        out = subprocess.run(
            ["git", f"--git-dir={self.git.git_dir}", "cat-file", "blob", f"{commit}:{rel}"],
            capture_output=True, check=True,
        )  # fmt: skip
        return out.stdout

    def _check(self, expected: dict[str, bytes], who: str) -> None:
        for rel, data in expected.items():
            if (self.ws / rel).read_bytes() != data:
                raise SystemExit(
                    f"{who} did not restore {rel}: the benchmark's figures would be void"
                )

    def sweep(self) -> None:
        self.load("sweep: checkpoint time against changed files")
        for k in self.args.sweep:
            if not self.args.no_server:
                self.tb.start_server(self.args.server_settle)
                # The first checkpoint after a start scans everything (the watcher cannot know
                # what changed while no server ran): take it first, on both sides.
                self.both_checkpoint(self.tb.checkpoint_server, "serverFirst", "noop.git")
                self.edit(k)
                self.settle(k)
                self.both_checkpoint(self.tb.checkpoint_server, f"sweep.{k}.warm", f"sweep.{k}.git")
                self.edit(k)  # again, asked at once: no quiet moment to read ahead
                self.both_checkpoint(self.tb.checkpoint_server, f"sweep.{k}.atonce",
                                     f"sweep.{k}.git")
                self.tb.stop_server()
            self.edit(k)
            self.both_checkpoint(self.tb.checkpoint_cli, f"sweep.{k}.cold", f"sweep.{k}.git")
            s = self.results["samples"]
            warm = s.get(f"sweep.{k}.warm", [float("nan")])[-1]
            atonce = s.get(f"sweep.{k}.atonce", [float("nan")])[-1]
            print(
                f"   {k:>6} files: server {warm:.3f}s (at once {atonce:.3f}s), "
                f"cli {s[f'sweep.{k}.cold'][-1]:.3f}s, "
                f"git {median(s[f'sweep.{k}.git']):.3f}s",
                flush=True,
            )

    def hook(self) -> None:
        self.load("hook path: fresh CLI process, server running")
        if self.args.no_server:
            return
        self.tb.start_server(self.args.server_settle)
        self.both_checkpoint(self.tb.checkpoint_server, "serverFirst", "noop.git")
        for _ in range(self.args.repeat):
            self.both_checkpoint(self.tb.checkpoint_cli, "noop.hook", "noop.git.hook")
            self.both_checkpoint(self.tb.checkpoint_alone, "noop.hook.alone", "noop.git.hook")
        for _ in range(self.args.repeat):
            self.edit(10)
            self.both_checkpoint(self.tb.checkpoint_cli, "edit10.hook", "edit10.git.hook")
        for _ in range(self.args.repeat):
            # CLI checkpoint and rewind, handed to the server, right after the edits
            self._rewind_round(False, settle=False, key="rewind.hook", git_key="rewind.git.hook")
        s = self.results["samples"]
        print(f"   no-op: hand-off {median(s['noop.hook']) * 1000:.1f} ms, alone "
              f"{median(s['noop.hook.alone']) * 1000:.1f} ms, git "
              f"{median(s['noop.git.hook']) * 1000:.1f} ms", flush=True)
        self.tb.stop_server()

    # -- report -----------------------------------------------------------------------------
    def table(self) -> list[dict[str, Any]]:
        s = self.results["samples"]
        f = self.results["figures"]
        rows: list[dict[str, Any]] = []

        def faster(name: str, tb_key: str, git_key: str, target: float, note: str = "") -> None:
            tb, git = median(s.get(tb_key, [])), median(s.get(git_key, []))
            ratio = git / tb if tb > 0 else float("nan")
            rows.append({
                "figure": name, "turnback": tb, "git": git, "unit": "s", "ratio": ratio,
                "target": f"≥ {target:g}× faster" if target > 1 else "no slower",
                "met": ratio >= target, "n": len(s.get(tb_key, [])), "note": note,
            })  # fmt: skip

        faster("checkpoint, nothing changed, server running", "noop.warm", "noop.git", 30)
        faster("checkpoint, 10 files changed, server running", "edit10.warm", "edit10.git", 30)
        faster("hook: checkpoint, nothing changed, fresh CLI, server running", "noop.hook",
               "noop.git.hook", 4, "handed to the server over its socket")
        faster("hook: the same, the CLI told to work alone", "noop.hook.alone",
               "noop.git.hook", 1.5, "TURNBACK_HANDOFF=0, server running; no target")
        faster("checkpoint, nothing changed, cold CLI (no server anywhere)", "noop.cold",
               "noop.git", 1.5)
        faster("hook: checkpoint, 10 files changed at once, fresh CLI, server running",
               "edit10.hook", "edit10.git.hook", 1, "no target in the issue")
        faster("hook: rewind of 10 files at once, fresh CLI, server running", "rewind.hook",
               "rewind.git.hook", 3)
        faster("checkpoint, nothing changed, fresh Store.open()", "noop.api", "noop.git", 1,
               "process wall time")  # fmt: skip
        faster(
            "checkpoint, 10 files changed, cold CLI",
            "edit10.cold",
            "edit10.git",
            1,
            "no SPEC target",
        )
        faster("first checkpoint of the whole workspace", "first.turnback", "first.git", 1)
        faster("rewind of 10 changed files (server)", "rewind.server", "rewind.git", 20)
        faster("rewind of 10 changed files (cold CLI, no server)", "rewind.cli", "rewind.git", 3)
        faster("checkpoint, 10 files changed, server, asked at once", "edit10.atonce",
               "edit10.git.atonce", 50, "no quiet moment before the request")
        faster("rewind of 10 changed files (server), asked at once", "rewind.atonce",
               "rewind.git.atonce", 40, "no quiet moment before the request")
        for k in self.args.sweep:
            cli = s.get(f"sweep.{k}.cold", [])
            for how in ("warm", "atonce"):
                srv = s.get(f"sweep.{k}.{how}", [])
                if cli and srv:
                    rows.append({
                        "figure": f"{k:,} changed files, server ({how}) vs cold CLI",
                        "turnback": median(srv), "git": median(cli), "unit": "s",
                        "ratio": median(cli) / median(srv), "target": "server ≤ CLI",
                        "met": median(srv) <= median(cli), "n": len(srv),
                        "note": "the 'shadow git' column holds the cold CLI here",
                    })  # fmt: skip
        for key, name in (("size.after100", "store size, first + 100 × 10 files"),):
            if key in f:
                tb, git = f[key]["turnback"], f[key]["git"]
                for kind in ("disk", "apparent"):
                    rows.append({
                        "figure": f"{name} ({kind})", "turnback": tb[kind], "git": git[kind],
                        "unit": "B", "ratio": git[kind] / tb[kind] if tb[kind] else float("nan"),
                        "target": "≤ shadow git", "met": tb[kind] <= git[kind], "n": 1, "note": "",
                    })  # fmt: skip
        if "noopBytes" in f:
            nb = f["noopBytes"]
            rows.append({
                "figure": "bytes added by a no-op checkpoint (caches apart)",
                "turnback": nb["turnback"], "git": nb["git"], "unit": "B",
                "ratio": nb["git"] / nb["turnback"] if nb["turnback"] else float("inf"),
                "target": "≤ 1 KB", "met": nb["turnback"] <= 1024, "n": self.args.noop_reps,
                "note": f"{nb.get('turnbackWithCaches', float('nan')):.0f} B with the caches",
            })  # fmt: skip
        return rows


def fmt(v: float, unit: str) -> str:
    if unit == "B":
        return f"{v / 1024 / 1024:.1f} MB" if v >= 1024 * 1024 else f"{v:.0f} B"
    return f"{v * 1000:.1f} ms" if v < 10 else f"{v:.1f} s"


def print_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| figure | Turnback | shadow git | ratio | target | met |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['figure']} | {fmt(r['turnback'], r['unit'])} | {fmt(r['git'], r['unit'])} | "
            f"{r['ratio']:.1f}× | {r['target']} | {'yes' if r['met'] else 'NO'} |"
        )
    text = "\n".join(lines)
    print(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument(
        "--git-dir", type=Path, default=None, help="shadow git dir (default: WORKSPACE.shadow.git)"
    )
    ap.add_argument(
        "--python", default=str(Path(sys.executable)), help="the venv's python (runs turnback)"
    )
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--noop-reps", type=int, default=10)
    ap.add_argument(
        "--settle", type=float, default=0.3, help="seconds for the watcher to see an edit"
    )
    ap.add_argument("--server-settle", type=float, default=1.0, help="seconds after server start")
    ap.add_argument(
        "--sweep", type=lambda s: [int(x) for x in s.split(",")], default=[1, 10, 100, 1000, 10000]
    )
    ap.add_argument("--seed", type=int, default=11, help="seed of the edits")
    ap.add_argument("--out", type=Path, default=HERE / "results.json")
    ap.add_argument("--phases", default="first,rounds,noop,cold,rewind,atonce,sweep,hook")
    ap.add_argument("--atonce-rounds", type=int, default=30)
    ap.add_argument("--no-flush", action="store_true",
                    help="no sync of the disk before each round (see Bench.flush_disk)")
    ap.add_argument("--no-server", action="store_true", help="CLI only (no warm figures)")
    ap.add_argument(
        "--ref", default=None, help="measure turnback as committed at REF (default: the work tree)"
    )
    a = ap.parse_args(argv)
    commit = use_ref(a.ref, HERE / "work", a.python) if a.ref else None
    b = Bench(a)
    b.results["turnbackCommit"] = commit or "working tree"
    t0 = time.perf_counter()
    phases = a.phases.split(",")
    try:
        b.prepare()
        for name, fn in (
            ("first", b.first), ("rounds", b.rounds), ("noop", b.noop_warm),
            ("cold", b.cold), ("rewind", b.rewind), ("atonce", b.atonce), ("sweep", b.sweep),
            ("hook", b.hook),
        ):  # fmt: skip
            if name in phases:
                fn()
    finally:
        b.tb.stop_server()
        b.load("end")
        b.results["elapsed"] = time.perf_counter() - t0
        rows = b.table()
        b.results["table"] = rows
        b.results["tableMarkdown"] = print_table(rows)
        a.out.write_text(json.dumps(b.results, indent=1, default=str) + "\n")
        print(f"wrote {a.out} ({b.results['elapsed']:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
