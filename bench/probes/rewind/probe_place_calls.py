"""System calls of a store's open and of the link probe (branch ``trust33``): the open now
records its root as the probe's place and lists it for killed probes' files
(``fs/probeplace``); the probe goes into that root (its ``open`` and ``fstat``) and a
"links" answer is asked again at each refused link (``fs/hardlinks``).

    PYTHONPATH=server strace -f -qq -o OUT python bench/probes/rewind/probe_place_calls.py open N
    PYTHONPATH=server strace -f -qq -o OUT python bench/probes/rewind/probe_place_calls.py probe N

``open``: N opens and closes of a store with a checkpoint (``Store.open``, ``close``);
``probe``: N calls of ``hardlinks.makes_links`` on a workspace folder while the store is
open, as a put back's refused link makes them (the kept answer cleared before each where
the tree keeps one). Each phase is bracketed by a ``stat`` of ``/turnback-mark-begin``
and ``/turnback-mark-end`` (no such file); count the trace's lines between the two marks,
after one warm-up round outside them. Scratch data under ``$BENCHDATA`` (default the
system's temporary folder), removed at the end.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from turnback import Store
from turnback.fs import hardlinks
from turnback.fs.folders import FdFolder, open_root


def _mark(name: str) -> None:
    try:
        os.stat(f"/turnback-mark-{name}")
    except OSError:
        pass


def _opens(ws: Path, n: int) -> None:
    for _ in range(n):
        Store.open(ws).close()


def _probes(ws: Path, n: int) -> None:
    with Store.open(ws):
        folder = open_root(str(ws / "d"))
        assert isinstance(folder, FdFolder)
        with folder:
            for _ in range(n):
                hardlinks._by_device.clear()  # a tree that kept "links" would not ask
                hardlinks.makes_links(folder)


def main() -> None:
    what, n = sys.argv[1], int(sys.argv[2])
    scratch = Path(tempfile.mkdtemp(prefix="probe-place-", dir=os.environ.get("BENCHDATA")))
    try:
        ws = scratch / "ws"
        (ws / "d").mkdir(parents=True)
        (ws / "d" / "a.txt").write_text("one\n")
        with Store.open(ws) as store:
            store.checkpoint(label="first")
        run = _opens if what == "open" else _probes
        run(ws, 1)  # imports and first-time work outside the marks
        _mark("begin")
        run(ws, n)
        _mark("end")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
