"""Walks at server start on an existing store: a checkpoint asked as soon as the server is up,
then a no-op checkpoint 5 s later (issue 23: before, the watcher coming up after the first walk
made that second one walk the whole workspace again).

    python bench/startup_walks.py WORKSPACE [TURNBACK_PACKAGE_FOLDER]

The workspace must have a store already (e.g. after ``bench/first_memory.py measure``). The
server is started as the tests start it (``tests/server/conftest.py``), on this checkout's
``server`` unless another package folder is given (``git archive REF server`` output).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from server.conftest import started  # noqa: E402


async def main(ws: Path, code: Path) -> None:
    t0 = time.perf_counter()
    async with started(ws, PYTHONPATH=str(code)) as client:
        first = await client.call("turnback/createCheckpoint", {})
        ready_first = time.perf_counter() - t0
        await asyncio.sleep(5)
        t1 = time.perf_counter()
        again = await client.call("turnback/createCheckpoint", {})
        noop = time.perf_counter() - t1
    print(f"start + first checkpoint {ready_first:.2f} s (incremental {first.get('incremental')}); "
          f"no-op 5 s later {noop * 1000:.1f} ms (incremental {again.get('incremental')}); "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    code = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "server"
    asyncio.run(main(Path(sys.argv[1]).resolve(), code.resolve()))
