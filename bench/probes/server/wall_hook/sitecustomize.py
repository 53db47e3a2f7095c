"""Bench-only hooks for a server started with this folder first on ``PYTHONPATH``
(``bench/probes/server/wall_threads.py`` runs; bench/RESULTS.md, branch ``wall31``). Python imports
``sitecustomize`` at start-up, before the server's modules. Each hook is off unless its
variable is set:

- ``WALL_GC_LOG=PREFIX``: every cyclic collection, one line in ``PREFIX.<pid>``
  (``CLOCK_MONOTONIC`` ns at its start and end, the thread's id, the generation, the objects
  collected), and every pack block decoded (``PackReader._decompress``), one line in
  ``PREFIX.dec.<pid>`` (start, end, thread, bytes decoded): to place them in the requests'
  windows of a ``wall_threads.py --json`` run;
- ``WALL_SWITCH_S=SECONDS``: the interpreter's switch interval (``sys.setswitchinterval``;
  Python's default is 0.005).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import threading
import time
from typing import Any


def _now() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def _gc_log(prefix: str) -> None:
    import gc

    out = open(f"{prefix}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 (the process's)
    began = [0]

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began[0] = _now()
        else:
            out.write(f"{began[0]} {_now()} {threading.get_native_id()} "
                      f"{info['generation']} {info['collected']}\n")

    gc.callbacks.append(note)


class _PackDecodes(importlib.abc.MetaPathFinder):
    """Wraps ``PackReader._decompress`` once ``turnback.objects.packs`` is imported."""

    def __init__(self, prefix: str) -> None:
        self.out = open(f"{prefix}.dec.{os.getpid()}", "a", buffering=1)  # noqa: SIM115

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "turnback.objects.packs":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        out = self.out

        def exec_module(module: Any) -> None:
            run(module)
            decode = module.PackReader._decompress

            def logged(reader: Any, loc: Any, need: int) -> bytes:
                t0 = _now()
                block: bytes = decode(reader, loc, need)
                out.write(f"{t0} {_now()} {threading.get_native_id()} {len(block)}\n")
                return block

            module.PackReader._decompress = logged

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if os.environ.get("WALL_GC_LOG"):
    _gc_log(os.environ["WALL_GC_LOG"])
    sys.meta_path.insert(0, _PackDecodes(os.environ["WALL_GC_LOG"]))
if os.environ.get("WALL_SWITCH_S"):
    sys.setswitchinterval(float(os.environ["WALL_SWITCH_S"]))
