"""Mounting ``casefs.py`` (a case-insensitive, normalization-insensitive FUSE passthrough)
for the tests: ``mounted(backing, mountpoint)`` or ``why_not()`` — the reason it cannot
run here (no /dev/fuse, no fusermount3, no mfusepy or libfuse), for a skip that says so.
``scripts/setup.sh`` installs Debian's fuse3 and mfusepy (pinned in pyproject's dev)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).parent


def why_not() -> str | None:
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine (FUSE is not available)"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is missing (Debian's fuse3; scripts/setup.sh installs it)"
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as exc:  # OSError: libfuse not found
        return f"mfusepy cannot load ({exc}); scripts/setup.sh installs it and fuse3"
    return None


@contextmanager
def mounted(backing: Path, mountpoint: Path, timeout: float = 20.0) -> Iterator[Path]:
    """``backing`` seen case-insensitively at ``mountpoint`` while the block runs."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, str(HERE / "casefs.py"), str(backing),
                             str(mountpoint)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while not os.path.ismount(mountpoint):  # a condition, polled until it holds
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"the case-folding FUSE mount failed: {err}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the case-folding FUSE mount took over {timeout} s")
            time.sleep(0.02)
        yield mountpoint
    finally:
        subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], check=False,
                       capture_output=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
