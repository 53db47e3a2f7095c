"""Instructions of the scan's look-ups of recorded trees in the object index
(``TreeBuilding._stored``, branch ``store27``): one cold no-op checkpoint, as the CLI runs
it (forked checks on), in this process, each ``_stored`` call marked; callgrind dumps its
counters at each mark, and ``--summarize`` adds the intervals inside the calls (the first
one includes the pack indexes' listing and read, which a no-op made no other way):

    cd WORKSPACE && PYTHONHASHSEED=0 TURNBACK_BACKGROUND=0 PYTHONPATH=SRC/server \\
        valgrind --tool=callgrind --dump-before=os_access \\
        --callgrind-out-file=OUT/cg.%p.out python bench/probes/checkpoint/tree_looks.py [--walk]
    python bench/probes/checkpoint/tree_looks.py --summarize OUT

``--walk``: the whole-tree case off (``Scanner._taken_whole``), so the walk looks up each
folder it reuses. ``--ab``: no marks and no forked check (the whole-tree case off), the walk
alone in this process: its total instructions compare two commits (``SRC`` before and after
``store27``, which has no ``_stored``). Nothing is written but what the checkpoint writes.
"""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from callgrind_marks import dump, instructions, marked


def _run() -> None:
    from turnback import Store
    from turnback.snapshot import build
    from turnback.snapshot import scan as scan_mod

    ab = "--ab" in sys.argv
    if "--walk" in sys.argv or ab:
        scan_mod.Scanner._taken_whole = lambda _self: None  # type: ignore[method-assign]
    if not ab:
        build.TreeBuilding._stored = marked(  # type: ignore[attr-defined]
            build.TreeBuilding._stored, "stored", dump)  # type: ignore[attr-defined]
    with Store.open(os.getcwd()) as s:
        s.scanner.fork_verify = not ab
        s.checkpoint()
    dump("end")


def _summarize(out: Path) -> None:
    """The parent's dumps (the one file set whose pid made the marks): ``cg.PID.out.N``,
    dump k holding what ran up to mark k; the odd marks close a ``_stored`` call."""
    by_pid: dict[str, dict[int, str]] = {}
    for p in glob.glob(str(out / "cg.*.out.*")):
        pid, n = p.rsplit("/", 1)[1].split(".")[1], p.rsplit(".", 1)[1]
        if n.isdigit():
            by_pid.setdefault(pid, {})[int(n)] = p
    files = max(by_pid.values(), key=len)  # the child made no marks
    marks = sorted(files)
    calls = (len(marks) - 1) // 2  # stored>, stored< pairs, then end
    inside = [instructions(files[marks[2 * i + 1]]) for i in range(calls)]
    print(f"calls={calls} total={sum(inside)} first={inside[0] if inside else 0} "
          f"rest_mean={sum(inside[1:]) / max(1, len(inside) - 1):.0f}")


if __name__ == "__main__":
    if "--summarize" in sys.argv:
        _summarize(Path(sys.argv[sys.argv.index("--summarize") + 1]))
    else:
        _run()
