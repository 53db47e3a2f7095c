"""Which modules a fresh ``turnback`` command imports, and which of them run a function of
their own once the imports are done (``sys.setprofile``): a module that is imported but never
runs one was imported only for names a path it never takes would call (cold36).

A call counts only when no module body is on the stack above it (a class built, a pattern
compiled, a dataclass made while importing counts as the import's, not as a run). The
forked child's calls are not seen (it leaves without the exit handler). Writes one line a
module, ``RAN`` or ``IDLE``, in the order of ``sys.modules`` sorted by name:

    cd WORKSPACE && TURNBACK_BACKGROUND=0 PYTHONPATH=PACKAGE_FOLDER \\
        python bench/probes/cli/modules_run.py OUT.txt checkpoint -m probe
"""

from __future__ import annotations

import atexit
import os
import sys
from types import FrameType
from typing import Any

_ran: set[str] = set()
_PID = os.getpid()


def _profile(frame: FrameType, event: str, _arg: Any) -> None:
    if event != "call" or frame.f_code.co_name == "<module>":
        return
    up = frame.f_back
    while up is not None and up.f_back is not None:  # the script's own body is the bottom
        if up.f_code.co_name == "<module>":
            return  # inside an import
        up = up.f_back
    _ran.add(str(frame.f_globals.get("__name__")))


def _write(out: str) -> None:
    sys.setprofile(None)
    if os.getpid() != _PID:
        return
    with open(out, "w") as fh:
        for name in sorted(k for k, v in sys.modules.items() if v is not None):
            fh.write(("RAN  " if name in _ran else "IDLE ") + name + "\n")


def main() -> None:
    out, *args = sys.argv[1:]
    atexit.register(_write, out)
    sys.setprofile(_profile)
    import threading

    threading.setprofile(_profile)
    sys.argv = ["turnback", *args]
    from turnback.cli.main import main as turnback

    turnback()


if __name__ == "__main__":
    main()
