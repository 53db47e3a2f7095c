"""What a link swapped into ``objects/`` after the store was opened lets a checkpoint and a gc
do outside the store: prints, per folder swapped, the files made and removed in the folder
the link names, and the error (None: the write went through).

    python bench/probes/objects/swapped_links.py --src <a server/ folder> [--log-bytes 0]

``--log-bytes 0``: every batch writes a pack (``packs.LOG_BYTES``), for ``objects/pack/``.
Scratch folders go under ``--scratch`` (removed after).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path


def run(scratch: Path, which: str, gc: bool) -> str:
    from turnback import Store

    d = scratch / which.replace("/", "_") / ("gc" if gc else "cp")
    ws, out = d / "ws", d / "out"
    ws.mkdir(parents=True)
    out.mkdir()
    (out / "mine.sh").write_text("echo mine\n")
    for i in range(4):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    with Store.open(ws) as s:
        s.checkpoint()
        if gc:
            (ws / "f0.txt").write_text("garbage\n" * 30)
            s.checkpoint(dirty={"f0.txt"})
            (ws / "f0.txt").write_text("kept\n" * 30)
            s.checkpoint(dirty={"f0.txt"})
            s.objects.close()
        folder = s.root / which
        if folder.exists():  # what it held copied where the link points: gc finds it there
            shutil.copytree(folder, out, dirs_exist_ok=True)
            shutil.rmtree(folder)
        os.symlink(out, folder)
        before = {str(p.relative_to(out)) for p in out.rglob("*")}
        err = None
        try:
            if gc:
                s.gc(keep_last=1)
            else:
                (ws / "f0.txt").write_text("workspace bytes\n" * 30)
                s.checkpoint(dirty={"f0.txt"})
        except Exception as exc:  # what the attack meets is the figure
            err = type(exc).__name__
        after = {str(p.relative_to(out)) for p in out.rglob("*")}
    return (f"{which:13} {'gc' if gc else 'checkpoint':10} made={sorted(after - before)} "
            f"removed={sorted(before - after)} error={err}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="a server/ folder to import turnback from")
    ap.add_argument("--log-bytes", type=int, default=None)
    ap.add_argument("--scratch", type=Path, default=None)
    a = ap.parse_args()
    sys.path.insert(0, a.src)
    from turnback.objects import packs

    if a.log_bytes is not None:
        packs.LOG_BYTES = a.log_bytes
    scratch = Path(tempfile.mkdtemp(dir=a.scratch))
    try:
        for which in ("objects/log", "objects", "objects/pack"):
            for gc in (False, True):
                print(run(scratch, which, gc))
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
