"""What planted object logs cost the merge a storing CLI command runs before it exits
(branch ``redteam12``, docs/RELIABILITY.md "redteam12").

    python bench/probes/objects/redteam12_costs.py damaged SCRATCH --logs K --mib M --rounds R
    python bench/probes/objects/redteam12_costs.py many SCRATCH --logs N

``damaged``: K logs of about M MiB each, planted in ``objects/log/`` (a real log of
random files from another store, copied under new names, one byte of each of its
blocks flipped so that no object of it reads intact): each round is a fresh ``Store`` that
checkpoints 3 edited files and merges as the CLI does after printing; prints the merge's
CPU, the logs and packs left and the packs' bytes per round. ``many``: N copies of a one-
frame log planted; the CPU of the open that finds them, of the merge, and of the next
open. CPU is ``time.process_time`` (this process only); the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server"))

from turnback import Store
from turnback.objects import packlog, packs


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def edit(ws: Path, tag: str) -> None:
    for i in range(3):
        p = ws / f"d{i}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{tag} {i}\n" * 20)
        os.utime(p, (time.time() - 10, time.time() - 10))


def source_log(scratch: Path, files: int, size: int) -> bytes:
    """The bytes of one real log holding ``files`` random files of ``size`` bytes."""
    ws = scratch / "src"
    for i in range(files):
        p = ws / f"r{i}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(os.urandom(size))
        os.utime(p, (time.time() - 10, time.time() - 10))
    Store.open(ws, create=True).checkpoint(label="src")
    edit(ws, "second")
    store = Store.open(ws)
    store.checkpoint(label="small")
    store.close()
    logs = packlog.log_names(ws / ".turnback" / "objects" / "log")
    return max(((ws / ".turnback" / "objects" / "log" / n).read_bytes() for n in logs), key=len)


def plant(folder: Path, data: bytes, n: int) -> None:
    for i in range(n):
        (folder / f"log-{90000 + i}-{os.urandom(8).hex()}").write_bytes(data)


def target(scratch: Path) -> Path:
    ws = scratch / "ws"
    edit(ws, "base")
    Store.open(ws, create=True).checkpoint(label="base")
    return ws


def damaged(scratch: Path, logs: int, mib: float, rounds: int) -> None:
    files = max(1, int(mib * 1024 * 1024 / 65536))
    data = bytearray(source_log(scratch, files, 65536))
    fd = os.open(scratch / "src.log", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
        found, _ = packlog.frames(fd, 0, len(data))
    finally:
        os.close(fd)
    blocks: set[tuple[int, int]] = set()
    for frame in found:  # a byte of every block flipped: no object reads intact
        for row in range(0, len(frame.rows), packs._ENTRY.size):
            _, off, length, _, _ = packs._ENTRY.unpack_from(frame.rows, row)
            blocks.add((off, length))
    for off, length in blocks:  # a block holds many objects: a byte in every 512
        for at in range(off + 256, off + length, 512):
            data[at] ^= 0xFF
    ws = target(scratch)
    folder = ws / ".turnback" / "objects" / "log"
    plant(folder, bytes(data), logs)
    print(f"planted {logs} damaged logs of {len(data) / 2**20:.1f} MiB; load {loadavg()}")
    for r in range(rounds):
        edit(ws, f"r{r}")
        store = Store.open(ws)
        store.checkpoint(label=f"r{r}")
        store.close()
        t = time.process_time()
        done = store.merge_logs()
        cpu = (time.process_time() - t) * 1000
        pack = ws / ".turnback" / "objects" / "pack"
        idx = [n for n in os.listdir(pack) if n.endswith(".idx")]
        size = sum(os.path.getsize(pack / n) for n in os.listdir(pack))
        print(f"round {r}: merge {done} {cpu:.1f} ms CPU; logs {len(packlog.log_names(folder))}"
              f" packs {len(idx)} pack bytes {size}")
    print(f"load {loadavg()}")


def many(scratch: Path, logs: int) -> None:
    ws = target(scratch)
    edit(ws, "one")
    store = Store.open(ws)
    store.checkpoint(label="one")
    store.close()
    folder = ws / ".turnback" / "objects" / "log"
    one = packlog.log_names(folder)[-1]
    plant(folder, (folder / one).read_bytes(), logs)
    print(f"planted {logs} one-frame logs of {(folder / one).stat().st_size} bytes; "
          f"load {loadavg()}")
    for what in ("open", "merge", "open after"):
        t = time.process_time()
        w = time.perf_counter()
        if what == "merge":
            out = store.merge_logs()
        else:
            store = Store.open(ws)
            store.close()
            out = len(packlog.log_names(folder))
        print(f"{what}: {(time.process_time() - t) * 1000:.0f} ms CPU, "
              f"{(time.perf_counter() - w) * 1000:.0f} ms wall ({out})")
    print(f"load {loadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["damaged", "many"])
    ap.add_argument("scratch", type=Path)
    ap.add_argument("--logs", type=int, default=17)
    ap.add_argument("--mib", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    shutil.rmtree(a.scratch, ignore_errors=True)
    a.scratch.mkdir(parents=True)
    try:
        if a.what == "damaged":
            damaged(a.scratch, a.logs, a.mib, a.rounds)
        else:
            many(a.scratch, a.logs)
    finally:
        shutil.rmtree(a.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
