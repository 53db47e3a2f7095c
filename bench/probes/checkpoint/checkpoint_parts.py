"""Instructions of each Python function on the at-once checkpoint's path, by callgrind.

Runs ``atonce_parts.py --now`` (10 edits, ``Store.checkpoint_now``, the stat cache saved
after the phase, a round) with an ``os.access`` call at the entry and the exit of each
function named in ``PARTS``; callgrind, told to dump its counters before every
``os_access`` (a C function of CPython's), writes one file per interval, and
``--summarize`` gives each function's inclusive instructions per round (every interval
while it is on the stack) and its own (the intervals where it is the innermost named
function open), sorted by the inclusive:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-before=os_access \\
        --callgrind-out-file=OUT/cg.out python bench/probes/checkpoint/checkpoint_parts.py \\
            --marks OUT/marks.json \\
        --workspace WS --rounds 10 --seed 11 [--src OTHER/server]
    python bench/probes/checkpoint/checkpoint_parts.py --summarize OUT

``--plain``: only the phase marks (no function wrapped), for the phase's instructions
without the wrappers' own cost. ``--src``, ``--workspace``, ``--rounds``, ``--seed``: as
``atonce_parts.py``. A small workspace keeps the run short (``gen_workspace.py WS --files
2000 --size-mb 12``); two runs to compare start from two copies of one workspace, so each
sees the same edits.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from callgrind_marks import RoundCounts, dump, dump_files, instructions, run_atonce, wrap_part

# (module, owner, attribute): the functions on the at-once checkpoint's path; those called
# once a file or a folder are here too, so their sum is seen
PARTS = (
    ("turnback.store.checkpoint_ops", "CheckpointOps", "checkpoint_now"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "_checkpoint_held"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "_snapshot"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "_workspace_here"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "_commit_checkpoint"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "_new_checkpoint"),
    ("turnback.store.checkpoint_ops", "CheckpointOps", "_checkpoint_event"),
    ("turnback.store.session_ops", "SessionOps", "append"),
    ("turnback.store.state", "StoreState", "_check_gc"),
    ("turnback.store.state", "StoreState", "_gc_generation"),
    ("turnback.store.state", "StoreState", "_packs_stale"),
    ("turnback.fs.heldfolder", "HeldFolder", "replaced"),
    ("turnback.sessions.files", "FileSessions", "append"),
    ("turnback.sessions.files", "FileSessions", "append_free_now"),
    ("turnback.fs.jsonl", None, "append_lines"),
    ("turnback.fs.locks", None, "_open_lock_file"),
    ("turnback.fs.instore", None, "folder_of"),
    ("turnback.snapshot.scan", "Scanner", "scan"),
    ("turnback.snapshot.scan", "Scanner", "_list_dirty"),
    ("turnback.snapshot.build", "TreeBuilding", "_build"),
    ("turnback.snapshot.build", "TreeBuilding", "_patch_dir"),
    ("turnback.snapshot.hashing", "Hashing", "_hash_pending"),
    ("turnback.snapshot.hashing", "Hashing", "_hash_one"),
    ("turnback.snapshot.ignore", "IgnoreRules", "in_dir"),
    ("turnback.objects.trees", None, "_patched"),
    ("turnback.objects.trees", "TreeReader", "name"),
    ("turnback.objects.trees", "TreeReader", "put_encoded"),
    ("turnback.objects.objectstore", "ObjectStore", "put_file"),
    ("turnback.objects.objectstore", "ObjectStore", "put"),
    ("turnback.objects.objectstore", None, "hash_bytes"),
    ("turnback.objects.objectstore", "ObjectStore", "commit"),
    ("turnback.objects.objectstore", "ObjectStore", "_commit_frame"),
    ("turnback.objects.objectstore", "ObjectStore", "_log_frame"),
    ("turnback.objects.objectstore", "ObjectStore", "sync"),
    ("turnback.objects.packs", "PackWriter", "add"),
    ("turnback.objects.packs", "PackWriter", "_flush_block"),
    ("turnback.objects.packs", "PackWriter", "seal"),
    ("turnback.objects.packlog", "LogFile", "append"),
    ("turnback.objects.packlog", "LogFile", "sync"),
    ("turnback.store.checkpoint_index", "CheckpointIndex", "add"),
    ("turnback.models", "Checkpoint", "to_json"),
    ("turnback.fs.jsonl", None, "dumps"),
)


def run(marks_path: Path, argv: list[str], plain: bool) -> None:
    marks: list[str] = []
    phase = ["idle"]

    def mark(name: str) -> None:
        # only inside the phase: the first walk's thousands of calls make no dumps
        if phase[0] != "checkpoint" and not name.startswith("phase:"):
            return
        marks.append(name)
        dump(name)

    def mark_phase(name: str) -> None:
        mark("phase:" + name)
        phase[0] = name

    def wrap() -> None:
        if not plain:
            for modname, owner, attr in PARTS:
                wrap_part(importlib.import_module(modname), owner, attr, mark)

    run_atonce(marks_path, argv, marks, mark_phase, wrap)


def summarize(out: Path) -> None:
    marks = json.loads((out / "marks.json").read_text())
    files = dump_files(out, marks)
    counts: RoundCounts[str] = RoundCounts()  # per label, per checkpoint round
    phase = "idle"
    stack: list[str] = []
    for k, m in enumerate(marks, start=1):
        # dump k holds what ran between mark k-1 and mark k
        cost = instructions(files[k])
        if phase == "checkpoint":
            counts.charge(cost, stack, str)
        if m.startswith("phase:"):
            new = m[6:]
            if phase == "checkpoint" and new != "checkpoint":
                counts.close()
            phase = new
        elif m.endswith(">"):
            stack.append(m[:-1])
            counts.call(m[:-1])
        else:
            if stack and stack[-1] == m[:-1]:
                stack.pop()
    print(f"{counts.rounds} checkpoints; medians per checkpoint (instructions, thousands)")
    print(f"{'function':40s} {'calls':>6s} {'inclusive':>10s} {'own':>9s}")
    for label in sorted(counts.incl, key=lambda lab: -counts.median(counts.incl, lab)):
        print(f"{label:40s} {counts.median(counts.calls, label):6.0f} "
              f"{counts.median(counts.incl, label) / 1000:10.1f} "
              f"{counts.median(counts.own, label) / 1000:9.1f}")


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--summarize"] and len(args) == 2:
        summarize(Path(args[1]))
        return 0
    plain = "--plain" in args
    args = [a for a in args if a != "--plain"]
    if args[:1] == ["--marks"] and len(args) >= 2:
        run(Path(args[1]), [*args[2:], "--now"], plain)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
