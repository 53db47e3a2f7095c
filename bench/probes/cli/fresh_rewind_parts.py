"""Instructions of each part of a fresh CLI rewind with no server (``turnback rewind CP``,
``TURNBACK_BACKGROUND=0``), counted by callgrind (load-independent).

Runs ``turnback.cli.main.main()`` as the ``turnback`` script does, in this process, with an
``os.access`` mark at the start and the end of each part (``bench/callgrind_marks.py``):
callgrind, told to dump before every ``os_access``, writes one file per interval, and
``--summarize`` adds them up per part (the innermost part open owns an interval). The early
child (``prescan.fork_early``) is counted in its own files (``%p`` in the output name):

    # the 10 edits (not counted)
    python bench/probes/cli/fresh_rewind_parts.py --prepare WS --seed 1
    TURNBACK_BACKGROUND=0 PYTHONHASHSEED=0 PYTHONPATH=SRC/server valgrind --tool=callgrind \\
        --trace-children=yes --dump-before=os_access --callgrind-out-file=OUT/cg.%p.out \\
        python bench/probes/cli/fresh_rewind_parts.py --marks OUT/marks.json -- -C WS rewind CP
    python bench/probes/cli/fresh_rewind_parts.py --summarize OUT

``SRC`` is the package to count (a byte-compiled ``git archive`` copy: a fresh process
compiles nothing it finds compiled); a prepared round is rewound once, so each run needs
its ``--prepare`` first.
"""

from __future__ import annotations

import glob
import importlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE))

from callgrind_marks import REWIND_PARTS, dump, instructions, recorder, wrap_on  # noqa: E402

# (module, owner, attribute, part): what a fresh rewind does, in order: the at-once
# rewind's parts but ``lookafter`` (not a part here: inside ``apply``), with the CLI's run,
# the store's open and close and the record after them
PARTS = (
    ("turnback.cli.direct", None, "run_argv", "direct"),  # after the handoff and the fork
    ("turnback.store.facade", "Store", "open", "open"),
    *(part for part in REWIND_PARTS if part[3] != "lookafter"),
    ("turnback.store.rewind_ops", "RewindOps", "_finish_or_retry", "record"),
    ("turnback.store.facade", "Store", "close", "close"),
)


def _wrap_later(marks: list[str]) -> None:
    """Wrap each part once its module is imported (by the CLI itself, in its own order:
    the imports stay counted where they happen)."""
    import builtins

    real_import = builtins.__import__
    pending = {m for m, _o, _a, _p in PARTS}
    mark = recorder(marks)

    def hook(name: str, *a: Any, **k: Any) -> Any:
        out = real_import(name, *a, **k)
        if pending:
            for module in [m for m in pending if m in sys.modules]:
                mod = sys.modules[module]
                if getattr(getattr(mod, "__spec__", None), "_initializing", False):
                    continue  # wrapped once its import is done
                pending.discard(module)
                for m, owner, attr, label in PARTS:
                    if m == module:
                        wrap_on(mod if owner is None else getattr(mod, owner), attr, label,
                                mark)
        return out

    builtins.__import__ = hook


def run(marks_path: Path, argv: list[str]) -> None:
    marks: list[str] = []
    _wrap_later(marks)
    sys.argv = ["turnback", *argv]
    real_exit = os._exit
    pid = os.getpid()

    def leave(code: int) -> None:
        if os.getpid() == pid:
            marks.append("end")
            dump("end")
            marks_path.write_text(json.dumps(marks))
        real_exit(code)

    os._exit = leave  # type: ignore[assignment]
    marks.append("start")
    dump("start")
    main = importlib.import_module("turnback.cli.main").main
    try:
        main()
    except SystemExit as exc:
        leave(exc.code if isinstance(exc.code, int) else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        leave(1)
    leave(0)


def summarize(out: Path) -> None:
    marks = json.loads((out / "marks.json").read_text())
    pids = sorted({Path(p).name.split(".")[1] for p in glob.glob(str(out / "cg.*.out*"))})
    by_pid = {pid: sorted(glob.glob(str(out / f"cg.{pid}.out.*")),
                          key=lambda p: int(p.rsplit(".", 1)[1])) for pid in pids}
    main_pid = max(by_pid, key=lambda p: len(by_pid[p]))
    files = by_pid[main_pid]
    parts: dict[str, int] = defaultdict(int)
    stack: list[str] = []
    # dump k (1-based) holds what ran between mark k-1 and mark k
    for k, m in enumerate(marks, start=1):
        owner = stack[-1] if stack else ("before" if k == 1 else "imports and the rest")
        parts[owner] += instructions(files[k - 1])
        if m.endswith(">"):
            stack.append(m[:-1])
        elif m.endswith("<"):
            stack.pop()
    total = sum(parts.values())
    for part, n in sorted(parts.items(), key=lambda x: -x[1]):
        print(f"{part:22s} {n / 1e6:8.3f} M")
    print(f"{'parent, from start':22s} {(total - parts['before']) / 1e6:8.3f} M")
    # each process's last counters (at its exit) are in its file without a number
    print(f"{'parent, after the end':22s} "
          f"{instructions(str(out / f'cg.{main_pid}.out')) / 1e6:8.3f} M")
    for pid, fs in by_pid.items():
        if pid != main_pid:
            n = sum(instructions(f) for f in [*fs, str(out / f"cg.{pid}.out")])
            print(f"{'child ' + pid:22s} {n / 1e6:8.3f} M (the early check, prescan.py)")


def prepare(workspace: Path, seed: int) -> None:
    from edits import Editor

    Editor(workspace, seed=seed).edit(10)
    os.sync()


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--summarize"] and len(args) == 2:
        summarize(Path(args[1]))
        return 0
    if args[:1] == ["--prepare"] and len(args) == 4 and args[2] == "--seed":
        prepare(Path(args[1]), int(args[3]))
        return 0
    if args[:1] == ["--marks"] and len(args) >= 3 and args[2] == "--":
        run(Path(args[1]), args[3:])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
