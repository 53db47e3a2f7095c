"""Bytes of the stat cache header a folder costs (what ``prescan.HEADER_MAX`` is sized by),
and what reading a planted header allocates (``tracemalloc`` peaks).

    python bench/probes/checkpoint/trust7_header_size.py SCRATCH_FOLDER

Makes SCRATCH_FOLDER/ws (10 x 10 x 20 folders of 50 one-byte files, 40-byte paths: SPEC's
50 files a folder), two checkpoints, and prints the header's length per folder; then
plants a header said to be 4 GiB in a few bytes, and a sparse one that holds 80 MiB, and
prints the peak allocation of the store's load and of the start child's read of each.
"""

from __future__ import annotations

import os
import struct
import sys
import time
import tracemalloc
from pathlib import Path

from turnback import Store
from turnback.snapshot import prescan
from turnback.snapshot.statcache import StatCache


def _workspace(ws: Path) -> None:
    for a in range(10):
        for b in range(10):
            for c in range(20):
                d = ws / f"src_module_{a}" / f"component_{b}" / f"feature_dir_{c}"
                d.mkdir(parents=True)
                for f in range(50):
                    (d / f"file_{f}.py").write_text("x")
    old = time.time() - 10
    for root, _dirs, files in os.walk(ws):
        for f in files:
            os.utime(os.path.join(root, f), (old, old))


def _peak(call: object) -> int:
    tracemalloc.start()
    try:
        call()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    scratch = Path(sys.argv[1])
    ws = scratch / "ws"
    if not ws.is_dir():
        _workspace(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()
    path = ws / ".turnback" / "cache" / "stat.bin"
    (hlen,) = struct.unpack_from("<I", path.read_bytes()[:12], 8)
    folders = sum(1 for _ in os.walk(ws)) - sum(1 for _ in os.walk(ws / ".turnback"))
    print(f"folders {folders}  header {hlen} bytes  {hlen / folders:.0f} bytes a folder  "
          f"file {path.stat().st_size} bytes")
    planted = scratch / "planted.bin"
    said = prescan.MAGIC + prescan.U32.pack(2**32 - 1) + b"{}" + bytes(8)
    held_len = getattr(prescan, "HEADER_MAX", 64 << 20) + (16 << 20)
    for name in ("said 4 GiB", "holds 80 MiB"):
        if name.startswith("said"):
            planted.write_bytes(said)
        else:
            with planted.open("wb") as f:
                f.write(prescan.MAGIC + prescan.U32.pack(held_len))
                f.truncate(len(prescan.MAGIC) + 4 + held_len + 8)
        store_peak = _peak(lambda: StatCache(planted).load())
        child_peak = _peak(lambda: prescan.read_records(str(planted)))
        print(f"{name}: store's load peak {store_peak} bytes, start child's read peak "
              f"{child_peak} bytes")
    planted.unlink()


if __name__ == "__main__":
    main()
