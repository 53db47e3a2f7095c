"""Instructions of cold blob reads out of pack blocks: ``N`` blobs of a store picked at
random (seeded), each read with the reader's decoded-block cache emptied before it.

    valgrind --tool=callgrind --toggle-collect='*decompressionreader_read*' \\
        python bench/probes/objects/cold_blob_reads.py WORKSPACE N

counts the zstd decode alone; prints the blobs read, their mean size and the mean bytes a
read decoded to reach its blob (``off + length`` in its block).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/
sys.path.insert(0, str(HERE.parent / "server"))

from turnback.errors import TurnbackError  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def main() -> int:
    ws, n = Path(sys.argv[1]), int(sys.argv[2])
    with Store.open(ws) as store:
        reader = store.objects.packs
        reader.refresh(whole=True)
        rows = [(k, v) for d in reader.listing().values() for k, v in d.items()]
        done = size = decoded = 0
        for name, loc in random.Random(5).sample(rows, min(n * 3, len(rows))):
            reader._blocks.clear()  # cold: nothing decoded kept
            reader._cached = 0
            try:
                data = store.objects.get(b"blob", name)
            except TurnbackError:
                continue  # a tree
            done, size, decoded = done + 1, size + len(data), decoded + loc.off + loc.length
            if done >= n:
                break
    print(f"{done} blobs, {size / done:.0f} bytes each, {decoded / done:.0f} bytes decoded a read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
