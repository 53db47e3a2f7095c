"""Each module a fresh no-op ``turnback checkpoint`` imports, with its own cost: the
minimum over runs of ``-X importtime``'s self time, and (``--callgrind``) the
instructions callgrind counts while that module's body runs, its own imports left out.

    cd WORKSPACE && env -u PYTHONDONTWRITEBYTECODE TURNBACK_BACKGROUND=0 \\
        PYTHONPATH=SRC/server python bench/probes/cli/import_costs.py [--runs 5] [--callgrind OUT]

With ``--callgrind OUT``, one run under ``valgrind --tool=callgrind
--dump-before=os_access``: a finder first on ``sys.meta_path`` wraps every module's loader
so its ``create_module`` and ``exec_module`` say ``name>`` / ``name<`` (``callgrind_marks``),
and each interval between two marks is counted to the module on top of the import stack
then. The parent's marks only (the forked child imports nothing of the store). The marks'
own calls (~2 k instructions each) land in the intervals; the parent's work after its last
import is counted to no module. Prints one line a module, most costly first, and the sum
(the parent's whole count). ``OUT`` (a folder) is left for a second look; remove it after.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
from pathlib import Path

TURNBACK = [os.path.join(os.path.dirname(sys.executable), "turnback"), "checkpoint", "-m", "ic"]


def importtime_once() -> dict[str, int]:
    """Self µs of each module, one ``-X importtime`` run of the no-op."""
    out = subprocess.run([sys.executable, "-X", "importtime", *TURNBACK],
                         capture_output=True, text=True, check=True).stderr
    got: dict[str, int] = {}
    for line in out.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cum, name = line[len("import time:"):].split("|")
        got[name.strip()] = int(self_us)
    return got


def run_marked() -> None:
    """Run the no-op in this process with each module's body marked (under callgrind)."""
    import importlib.abc
    import importlib.machinery

    marks: list[str] = []
    out = os.environ["IMPORT_COSTS_OUT"]
    me = os.getpid()

    def mark(name: str) -> None:
        marks.append(name)
        os.access(f"/@@{len(marks)}", os.F_OK)

    def save() -> None:
        if os.getpid() == me:
            with open(os.path.join(out, "marks.txt"), "w") as f:
                f.write("\n".join(marks))

    class Marked(importlib.abc.Loader):
        def __init__(self, inner: importlib.abc.Loader, name: str) -> None:
            self.inner, self.name = inner, name

        def create_module(self, spec: importlib.machinery.ModuleSpec) -> object:
            mark(self.name + ">")
            try:
                return self.inner.create_module(spec)
            finally:
                mark(self.name + "<")

        def exec_module(self, module: object) -> None:
            mark(self.name + ">")
            try:
                self.inner.exec_module(module)  # type: ignore[arg-type]
            finally:
                mark(self.name + "<")

        def __getattr__(self, attr: str) -> object:
            return getattr(self.inner, attr)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object, target: object = None) -> object:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = Marked(spec.loader, name)
                    return spec
            return None

    sys.meta_path.insert(0, Finder())
    real_exit = os._exit

    def exit_saving(code: int) -> None:
        save()
        real_exit(code)

    os._exit = exit_saving  # type: ignore[assignment]
    sys.argv = TURNBACK
    from turnback.cli.main import main

    try:
        main()
    finally:
        save()


def count(out: Path) -> dict[str, int]:
    """Instructions a module, from ``out``'s dumps and marks (the parent's)."""
    marks = (out / "marks.txt").read_text().split("\n")
    by_pid: dict[str, dict[int, str]] = {}
    for p in glob.glob(str(out / "cg.*.*")):
        parts = os.path.basename(p).split(".")
        if len(parts) == 3 and parts[2].isdigit():
            by_pid.setdefault(parts[1], {})[int(parts[2])] = p
    pid, files = max(by_pid.items(), key=lambda kv: len(kv[1]))  # the parent's: a dump a mark
    last = out / f"cg.{pid}"  # its part after the last dump, written at its exit
    if last.exists():
        files[max(files) + 1] = str(last)
    from callgrind_marks import instructions

    got: dict[str, int] = {}
    stack = ["(no module: start, work between imports)"]
    for k in sorted(files):  # dump k ends at mark k; the last, at the exit
        got[stack[-1]] = got.get(stack[-1], 0) + instructions(files[k])
        m = marks[k - 1] if k <= len(marks) else ""
        if m.endswith(">"):
            stack.append(m[:-1])
        elif m.endswith("<") and len(stack) > 1:
            stack.pop()
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--callgrind", metavar="OUT")
    ap.add_argument("--marked", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.marked:
        run_marked()
        return
    if a.callgrind:
        out = Path(a.callgrind)
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=os_access",
                        f"--callgrind-out-file={out}/cg.%p", sys.executable, __file__,
                        "--marked"], env={**os.environ, "IMPORT_COSTS_OUT": str(out)},
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        got = count(out)
        unit = "instructions"
    else:
        runs = [importtime_once() for _ in range(a.runs)]
        got = {name: min(r.get(name, 0) for r in runs) for name in runs[0]}
        unit = f"µs, min of {a.runs}"
    for name, v in sorted(got.items(), key=lambda kv: -kv[1]):
        print(f"{v:>12,}  {name}")
    print(f"{sum(got.values()):>12,}  sum ({unit}, {len(got)} modules)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main()
