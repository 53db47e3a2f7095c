"""Instructions of each part of an at-once rewind, counted by callgrind (load-independent).

Runs ``atonce_parts.py`` (checkpoint, 10 edits, ``rewind(..., finish_later=True)``,
``finish_rewind``, a round) with an ``os.access`` call at the start and the end of each
part of the rewind; callgrind, told to dump its counters before every ``os_access`` (a C
function of CPython's), writes one file per interval, and ``--summarize`` adds them up per
part (the innermost part open owns an interval: ``preload`` runs inside ``journal``'s
wait, ``lookafter`` inside ``apply``; ``rewind`` alone is what no part names):

    PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-before=os_access \\
        --callgrind-out-file=OUT/cg.out python bench/probes/rewind/rewind_parts.py --marks \\
            OUT/marks.json \\
        --workspace WS --rounds 12 --seed 7 [--src OTHER/server]
    python bench/probes/rewind/rewind_parts.py --summarize OUT     # medians per part, and per phase

``--src``, ``--workspace``, ``--rounds``, ``--seed``: as ``atonce_parts.py``. A small
workspace keeps callgrind's run short (``gen_workspace.py WS --files 4000 --size-mb 24
--folders 200``: ~2 minutes for 12 rounds); two runs to compare start from two copies of
one workspace, so each sees the same edits.
"""

from __future__ import annotations

import importlib
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from callgrind_marks import (
    REWIND_PARTS,
    dump_files,
    instructions,
    recorder,
    run_atonce,
    wrap_on,
)


def run(marks_path: Path, argv: list[str]) -> None:
    sys.argv = [sys.argv[0], *argv]  # atonce_parts reads --src at its import
    marks: list[str] = []
    mark = recorder(marks)

    def wrap() -> None:
        for module, owner, attr, label in REWIND_PARTS:
            mod = importlib.import_module(module)
            wrap_on(mod if owner is None else getattr(mod, owner), attr, label, mark)

    run_atonce(marks_path, argv, marks, lambda phase: mark("phase:" + phase), wrap)


def summarize(out: Path) -> None:
    """Medians per phase and part, in millions of instructions."""
    marks = json.loads((out / "marks.json").read_text())
    files = dump_files(out, marks)
    phase, stack = "setup", []
    rounds: dict[tuple[str, str], list[int]] = defaultdict(list)
    current: dict[str, int] = defaultdict(int)
    for k, m in enumerate(marks, start=1):
        # dump k holds what ran between mark k-1 and mark k: the innermost part open then
        current[stack[-1] if stack else phase] += instructions(files[k])
        if m.startswith("phase:"):
            if phase in atonce_parts_phases():
                for part, n in current.items():
                    rounds[(phase, part)].append(n)
                rounds[(phase, "= all")].append(sum(current.values()))
            current.clear()
            phase = m[len("phase:"):]
        elif m.endswith(">"):
            stack.append(m[:-1])
        else:
            stack.pop()
    for (ph, part), values in sorted(rounds.items()):
        print(f"{ph:10s} {part:13s} {statistics.median(values) / 1e6:8.3f} M  "
              f"(min {min(values) / 1e6:.3f}, max {max(values) / 1e6:.3f}, {len(values)} rounds)")


def atonce_parts_phases() -> tuple[str, ...]:
    return ("checkpoint", "rewind", "finish")


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--summarize"] and len(args) == 2:
        summarize(Path(args[1]))
        return 0
    if args[:1] == ["--marks"] and len(args) >= 2:
        run(Path(args[1]), args[2:])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
