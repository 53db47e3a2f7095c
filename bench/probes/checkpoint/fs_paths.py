"""What reaching folders by path (Windows' way, ``fs/folders.py``'s ``PathFolder``) costs
against folder descriptors, measured on Linux with ``TURNBACK_FS_PATHS=1``.

Generates a workspace (``gen_workspace.py``, ``--files`` files), then for each round runs
one child process per mode, in alternating order (so load affects both alike), each
timing in-process:

- ``first``: the first checkpoint into a fresh store (every file read);
- ``no-op``: a checkpoint with nothing changed, in a fresh ``Store`` (the CLI's case; no
  forked pre-check in either mode, so the two walk alike);
- ``rewind``: a rewind to the first checkpoint after ``--changed`` files were rewritten
  (safety checkpoint, plan, checks, writes);
- ``undo``: the undo of that rewind.

Prints the median of each per mode and the load average. What it does not show: Windows'
own costs (NTFS, Defender's scans of every file opened), which only a Windows machine
can.

    PYTHONPATH=server python bench/probes/checkpoint/fs_paths.py --files 5000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from gen_workspace import Plan, generate

CHILD = r"""
import json, os, sys, time
from turnback import Store
from turnback.fs import osflags

ws, store_dir, changed = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {"descriptors": osflags.DESCRIPTORS}
t = time.perf_counter(); s = Store.open(ws, store_dir=store_dir); a = s.checkpoint()
out["first"] = time.perf_counter() - t
s.close()
t = time.perf_counter(); s = Store.open(ws, store_dir=store_dir); s.checkpoint()
out["no-op"] = time.perf_counter() - t
files = sorted(p for p in (os.path.join(d, f) for d, _, fs in os.walk(ws) for f in fs)
               if ".bench" not in p and "node_modules" not in p and not os.path.islink(p))
for p in files[:changed]:
    with open(p, "ab") as f:
        f.write(b"\n// changed\n")
t = time.perf_counter(); s.rewind(a.id)
out["rewind"] = time.perf_counter() - t
t = time.perf_counter(); s.undo()
out["undo"] = time.perf_counter() - t
s.close()
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--changed", type=int, default=100)
    args = ap.parse_args()
    root = Path(__file__).resolve().parents[3] / "server"
    results: dict[str, dict[str, list[float]]] = {"descriptors": {}, "paths": {}}
    with tempfile.TemporaryDirectory(prefix="fs-paths-bench-") as tmp:
        ws = Path(tmp) / "ws"
        generate(ws, Plan(files=args.files, size_mb=args.files * 6 / 1000, folders=args.files // 50,
                          node_modules_files=0, seed=1), progress=False)
        load = [os.getloadavg()]
        for r in range(args.rounds):
            modes = ["descriptors", "paths"] if r % 2 == 0 else ["paths", "descriptors"]
            for mode in modes:
                store = Path(tmp) / f"store-{mode}-{r}"
                env = {**os.environ, "PYTHONPATH": str(root),
                       "TURNBACK_FS_PATHS": "1" if mode == "paths" else ""}
                got = subprocess.run([sys.executable, "-c", CHILD, str(ws), str(store),
                                      str(args.changed)], env=env, capture_output=True,
                                     text=True, check=True)
                row = json.loads(got.stdout)
                assert row.pop("descriptors") == (mode == "descriptors")
                for k, v in row.items():
                    results[mode].setdefault(k, []).append(v)
                shutil.rmtree(store)
            load.append(os.getloadavg())
    print(f"{args.files} files, {args.changed} changed, {args.rounds} rounds, "
          f"load average (1 min) {min(x[0] for x in load):.1f}-{max(x[0] for x in load):.1f}")
    for k in results["descriptors"]:
        d = statistics.median(results["descriptors"][k]) * 1000
        p = statistics.median(results["paths"][k]) * 1000
        print(f"  {k:7} descriptors {d:9.1f} ms   paths {p:9.1f} ms   ({p / d:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
