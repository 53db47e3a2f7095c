"""A body the framing refuses, skipped from a regular file as stdin (``StdinReader``'s
threaded path), then the next header line: time, peak memory and whether the line came
whole. ``--rev REV`` runs that commit's ``server/turnback/server/transport/stdin.py`` instead of the
imported one (``loop24`` made the skip one executor trip a ``CHUNK``; before it, one a
skip). Run pairs alternating, from the repository:

    PYTHONPATH=server python bench/probes/server/stdin_skip.py --mib 96 --rev fbad4c0
    PYTHONPATH=server python bench/probes/server/stdin_skip.py --mib 96
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from types import ModuleType


def _module(rev: str | None) -> ModuleType:
    if rev is None:
        from turnback.server.transport import stdin

        return stdin
    text = subprocess.run(["git", "show", f"{rev}:server/turnback/server/transport/stdin.py"],
                          capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stdin_at_rev.py")
        with open(path, "wb") as f:
            f.write(text)
        spec = importlib.util.spec_from_file_location("stdin_at_rev", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod


async def _skip(mod: ModuleType, path: str, n: int) -> tuple[int, float, bytes]:
    with open(path, "rb") as f:
        reader = mod.StdinReader(f)
        t = time.perf_counter()
        skipped = await reader.skip(n)
        spent = time.perf_counter() - t
        line = await reader.readline()
    return skipped, spent, line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=96)
    ap.add_argument("--rev", default=None)
    args = ap.parse_args()
    mod = _module(args.rev)
    n = args.mib * 2**20
    line = b"Content-Length: 2\r\n"
    with tempfile.NamedTemporaryFile(prefix="stdin-skip-") as body:
        for _ in range(args.mib):
            body.write(b"x" * 2**20)
        body.write(line)
        body.flush()
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        skipped, spent, got = asyncio.run(_skip(mod, body.name, n))
    print(f"{args.rev or 'imported'}: skipped {skipped} bytes in {spent * 1000:.1f} ms, "
          f"next line whole: {got == line}, peak RSS grew by "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before} KB, "
          f"load {os.getloadavg()[0]:.2f}", file=sys.stdout)


if __name__ == "__main__":
    main()
