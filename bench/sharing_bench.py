"""Push and pull of Turnback history beside ``git push``/``git fetch`` of the same content.

On SPEC's workspace (``python bench/gen_workspace.py bench/work/ws --force``): the first
checkpoint pushed and pulled, then 100 turns of 10 edited files each (a checkpoint, and a
git commit, per turn), pushed and pulled again. Both sides go to bare repositories on this
machine over ``file://`` and through the ``turnback`` CLI and the ``git`` CLI, each a fresh
process as a user would run them. Bytes are what each remote's ``objects/`` grew by.

    python bench/sharing_bench.py [--ws bench/work/ws] [--turns 100] [--files 10]

Edits the workspace (regenerate it before other benchmarks); writes under bench/work/.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "server"))

from edits import Editor  # noqa: E402

from turnback import Store  # noqa: E402

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("TURNBACK_")},
       "PYTHONPATH": str(HERE.parent / "server"), "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b"}


def du(path: Path) -> int:
    total = 0
    for d, _dirs, files in os.walk(path):
        for f in files:
            total += os.lstat(os.path.join(d, f)).st_size
    return total


CPU: dict[str, float] = {}  # the last timed command's CPU seconds (user + system)


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of ``cmd``; its CPU seconds, with every process it waited for (git's
    pack-objects and fast-import included), go to ``CPU["last"]``: on a loaded machine the
    wall clock mostly measures the queue, the CPU time what the command did."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True)
    took = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["last"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode(errors='replace')}")
    return took, proc.stdout.decode(errors="replace")


def tb(*args: str) -> list[str]:
    return [sys.executable, "-m", "turnback.cli.main", *args]


def git(*args: str) -> list[str]:
    return ["git", *args]


def phase(name: str, ws: Path, work: Path, out: dict[str, Any]) -> None:
    tb_remote, git_remote = work / "tb-remote.git", work / "git-remote.git"
    puller, git_puller = work / "puller", work / "git-puller"
    row: dict[str, Any] = {"load": os.getloadavg()}
    before = du(tb_remote / "objects")
    row["turnback_push_s"], text = timed(tb("--json", "push", tb_remote.as_uri()), ws)
    row["turnback_push_cpu_s"] = CPU["last"]
    row["turnback_push_bytes"] = du(tb_remote / "objects") - before
    row["turnback_push_reported_bytes"] = json.loads(text)["bytes"]
    before = du(git_remote / "objects")
    row["git_push_s"], _ = timed(git("push", "-q", git_remote.as_uri(), "HEAD:refs/heads/main"), ws)
    row["git_push_cpu_s"] = CPU["last"]
    row["git_push_bytes"] = du(git_remote / "objects") - before
    before = du(puller / ".turnback")
    fetched = du(puller / ".turnback" / "share" / "git" / "objects")
    row["turnback_pull_s"], text = timed(tb("--json", "pull", tb_remote.as_uri()), puller)
    row["turnback_pull_cpu_s"] = CPU["last"]
    row["turnback_pull_store_bytes"] = du(puller / ".turnback") - before
    # what the fetch brought: the puller's sharing repository's objects (packs, or loose
    # objects when git unpacked a small fetch), beside git fetch's .git/objects
    row["turnback_fetch_bytes"] = du(puller / ".turnback" / "share" / "git" / "objects") - fetched
    row["turnback_pulled"] = json.loads(text)["machines"]
    before = du(git_puller / ".git" / "objects")
    row["git_fetch_s"], _ = timed(git("fetch", "-q", git_remote.as_uri(),
                                      "+refs/heads/main:refs/remotes/r/main"), git_puller)
    row["git_fetch_cpu_s"] = CPU["last"]
    row["git_fetch_bytes"] = du(git_puller / ".git" / "objects") - before
    out[name] = row
    print(name, json.dumps({k: v for k, v in row.items() if k != "turnback_pulled"}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ws", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--out", type=Path, default=HERE / "work" / "sharing.json")
    a = ap.parse_args()
    ws = a.ws.resolve()
    work = HERE / "work" / "sharing"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for leftover in (ws / ".turnback", ws / ".git"):
        shutil.rmtree(leftover, ignore_errors=True)
    for bare in ("tb-remote.git", "git-remote.git"):
        subprocess.run(git("init", "-q", "--bare", str(work / bare)), check=True, env=ENV)
    (work / "puller").mkdir()
    subprocess.run(git("init", "-q", str(work / "git-puller")), check=True, env=ENV)
    subprocess.run(git("init", "-q", str(ws)), check=True, env=ENV)
    commit = subprocess.run(git("rev-parse", "HEAD"), cwd=HERE, capture_output=True,
                            text=True, env=ENV).stdout.strip()
    out: dict[str, Any] = {"commit": commit, "workspace": str(ws), "turns": a.turns,
                           "files_per_turn": a.files, "started": time.strftime("%F %T %Z")}

    def commit_all(msg: str, gc: bool = True) -> None:
        subprocess.run(git("add", "-A"), cwd=ws, check=True, env=ENV)
        # the automatic gc a commit may start runs before the commit returns, not beside
        # the timed pushes (detached, it packed the repository while Turnback's push ran)
        subprocess.run(git("-c", "gc.autoDetach=false", "-c", f"gc.auto={6700 if gc else 0}",
                           "commit", "-q", "-m", msg), cwd=ws, check=True, env=ENV)

    # the first checkpoint / the first commit: what each side does before its push (the
    # store's and git's own figures are in RESULTS.md's main tables); git's automatic gc
    # (it packs the loose objects of the add: git push then reuses what it compressed)
    # timed apart
    t = time.perf_counter()
    with Store.open(ws) as s:
        s.checkpoint("first")
    out["turnback_checkpoint_first_s"] = time.perf_counter() - t
    t = time.perf_counter()
    commit_all("first", gc=False)
    out["git_add_commit_first_s"] = time.perf_counter() - t
    out["git_gc_first_s"], _ = timed(git("-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"),
                                     ws)
    out["git_gc_first_cpu_s"] = CPU["last"]
    print(json.dumps({k: out[k] for k in ("turnback_checkpoint_first_s", "git_add_commit_first_s",
                                          "git_gc_first_s", "git_gc_first_cpu_s")}), flush=True)
    phase("first checkpoint", ws, work, out)
    editor = Editor(ws)
    with Store.open(ws) as s:
        for turn in range(a.turns):
            editor.edit(a.files)
            s.checkpoint(f"turn {turn}")
            commit_all(f"turn {turn}")
    phase(f"after {a.turns} x {a.files}-file turns", ws, work, out)
    out["finished"] = time.strftime("%F %T %Z")
    a.out.write_text(json.dumps(out, indent=2))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
