"""Where a fresh no-op checkpoint with no server spends its wall time: one ``turnback
checkpoint`` run in this process (as the CLI runs it), with timestamps (ms from this
script's start) of the parent reaching the two-core check (``Checker.finish``), each
side's checks ending (and how many folders each side verified), the checks met (the
child's answer read), the scan's end and the exit. The serial tail is "met" to "exit".

    cd WORKSPACE && TURNBACK_BACKGROUND=0 PYTHONPATH=SRC/server python \\
        bench/probes/cli/noop_phases.py
    ... --walk   # the whole-tree case off (Scanner._taken_whole, cold26): the walk's tail

Prints one line: ``name=ms`` pairs. Nothing is written but what the checkpoint writes.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

T0 = time.perf_counter()
_R, _W = os.pipe()  # the child's end of its checks, sent to this process


def _ms() -> float:
    return round((time.perf_counter() - T0) * 1000, 1)


def main() -> None:
    from turnback.snapshot import prescan
    from turnback.snapshot import scan as scan_mod

    me = os.getpid()
    got: dict[str, Any] = {}
    if "--walk" in sys.argv and hasattr(scan_mod.Scanner, "_taken_whole"):
        scan_mod.Scanner._taken_whole = lambda _self: None  # type: ignore[method-assign]
    verify = prescan.verify_folders

    def verify_folders(*args: Any, **kwargs: Any) -> Any:
        out = verify(*args, **kwargs)
        if os.getpid() == me:
            got["parent_checked"], got["parent_verified"] = _ms(), len(out)
        else:
            os.write(_W, f"{_ms()} {len(out)}\n".encode())
        return out

    finish = prescan.Checker.finish

    def finish_timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        got["parent_at_check"] = _ms()
        out = finish(self, *args, **kwargs)
        got["met"] = _ms()
        return out

    scan = scan_mod.Scanner.scan

    def scan_timed(self: Any, **kwargs: Any) -> Any:
        out = scan(self, **kwargs)
        got["scan_end"] = _ms()
        return out

    def report(code: int) -> None:
        if os.getpid() != me:  # the child leaving
            real_exit(code)
        got["exit"] = _ms()
        os.close(_W)
        line = os.read(_R, 100).split()
        if line:
            got["child_checked"], got["child_verified"] = float(line[0]), int(line[1])
        os.write(2, (" ".join(f"{k}={v}" for k, v in got.items()) + "\n").encode())
        real_exit(code)

    prescan.verify_folders = verify_folders  # type: ignore[assignment]
    prescan.Checker.finish = finish_timed  # type: ignore[method-assign]
    scan_mod.Scanner.scan = scan_timed  # type: ignore[method-assign]
    real_exit = os._exit
    os._exit = report  # type: ignore[assignment]
    from turnback.cli.main import main as cli_main

    sys.argv = ["turnback", "checkpoint", "-m", "noop_phases"]
    cli_main()


if __name__ == "__main__":
    main()
