"""``checkpoints.jsonl`` read by the index (``CheckpointIndex._refresh``) in pieces of at
most ``MAX_LINE`` bytes, as every other log's full read: a planted sparse tail of 2 GiB with
no newline after its last record was read whole into memory by every listing (2 GiB
resident, seconds; redteam48). The records before it are listed as before. Its holes are
passed over, not read (trust37): the listing read 2 GiB of zeros, 4-7 s of CPU, and held
several times ``MAX_LINE`` at its peak (``readline``'s buffers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.jsonl import MAX_LINE

# the child lists the checkpoints and says how much memory it held at most (KiB): its own
# image's high-water mark, ``VmHWM``. Not ``ru_maxrss``, which Linux carries across the
# exec from the process forked: the pytest process's own peak, so a child of a run past
# 128 MiB failed the bound whatever it held (redteam51: 147 MiB in a run of tests/store)
CHILD = """
import sys
from turnback import Store
def field(path, name):
    with open(path) as f:
        return int(next(l for l in f if l.startswith(name)).split()[1])
before = field("/proc/self/io", "rchar")
with Store.open(sys.argv[1]) as store:
    print(len(store.checkpoints()))
print(field("/proc/self/status", "VmHWM:"))
print(field("/proc/self/io", "rchar") - before)
"""

SPARSE = 2 << 30
# the bound on the child's peak: before, 2,068 MiB (torn) and 8,214 MiB (a long line);
# after, 406-541 MiB, as ``readline``'s buffers and the allocator's reuse fall (a quarter of
# SPARSE failed once in a full run at 541 MiB: ``ru_maxrss``, which a child started by
# ``vfork`` gets from its parent's peak at ``exec``; ``VmHWM`` is its own since trust37)
PEAK = SPARSE // 2
# trust37: what the listing may read and hold with the holes passed over (the zeros read,
# before: all 2 GiB, and a peak of 406-541 MiB)
READ = MAX_LINE // 2
HELD = MAX_LINE


def _store_with_a_sparse_tail(tmp_path: Path, newline_at_end: bool) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    with Store.open(ws) as store:
        store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        store.checkpoint(label="second")
    index = ws / ".turnback" / "checkpoints.jsonl"
    with open(index, "ab") as f:
        f.write(b"x")
        f.truncate(os.path.getsize(index) + SPARSE)
        if newline_at_end:
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
    return ws


def _listed(ws: Path) -> tuple[int, int, int]:
    """How many checkpoints a fresh process lists, its peak memory and the bytes it read."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(ws)], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1]) * 1024, int(out[2])


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="/proc/self/io and status")


def test_a_sparse_torn_tail_is_not_read_into_memory(tmp_path: Path) -> None:
    ws = _store_with_a_sparse_tail(tmp_path, newline_at_end=False)
    listed, peak, read = _listed(ws)
    assert listed == 2
    assert peak < PEAK, peak  # before redteam48: over 2 GiB held
    assert peak < HELD, peak  # before trust37: 406-541 MiB
    assert read < READ, read  # before trust37: the 2 GiB of zeros


def test_a_sparse_line_in_the_middle_is_not_read_into_memory(tmp_path: Path) -> None:
    ws = _store_with_a_sparse_tail(tmp_path, newline_at_end=True)
    with Store.open(ws) as store:
        (ws / "f.txt").write_text("three\n")
        store.checkpoint(label="after the long line")
    listed, peak, read = _listed(ws)
    assert listed == 3  # the record after the long line is read
    assert peak < PEAK, peak
    assert peak < HELD, peak
    assert read < READ, read
