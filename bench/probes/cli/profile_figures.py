"""Where Turnback's time goes, per benchmark figure, through the Python API in-process.

Each scenario runs under pyinstrument (sampling: the tree of where wall time
goes) and then again under cProfile (deterministic: the cost of each function,
slower overall but exact in call counts). The store lives outside the
workspace (``--store``), so this never touches the benchmark's own store.

Scenarios:
  first      the first checkpoint of the whole workspace (fresh store)
  noop       a no-op checkpoint by a fresh Store.open() (the cold CLI's work, minus imports)
  edit10     10 files edited, checkpoint told the dirty paths (what the server's watcher gives)
  edit10cold 10 files edited, checkpoint with no dirty set (the cold CLI)
  rewind10   checkpoint, edit 10 files, rewind to the checkpoint

    python bench/probes/cli/profile_figures.py --scenario edit10 --workspace bench/work/ws
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from edits import Editor
from pyinstrument import Profiler
from turnback_side import use_ref

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def profiled(name: str, fn: Callable[[], Any], out_dir: Path, top: int) -> None:
    prof = Profiler(interval=0.0005)
    t0 = time.perf_counter()
    prof.start()
    fn()
    prof.stop()
    wall = time.perf_counter() - t0
    text = prof.output_text(unicode=True, color=False, show_all=False)
    (out_dir / f"profile-{name}.txt").write_text(text)
    print(f"== {name}: {wall * 1000:.1f} ms (pyinstrument tree in {out_dir}/profile-{name}.txt)")
    print(text[:6000])


def cprofiled(name: str, fn: Callable[[], Any], out_dir: Path, top: int) -> None:
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    fn()
    pr.disable()
    wall = time.perf_counter() - t0
    buf = io.StringIO()
    st = pstats.Stats(pr, stream=buf).sort_stats("tottime")
    st.print_stats(top)
    (out_dir / f"cprofile-{name}.txt").write_text(buf.getvalue())
    print(f"== {name} under cProfile: {wall * 1000:.1f} ms; top {top} by own time:")
    print("\n".join(buf.getvalue().splitlines()[: top + 12]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--store", type=Path, default=HERE / "work" / "profile-store")
    ap.add_argument("--scenario", required=True,
                    choices=("first", "noop", "edit10", "edit10cold", "rewind10"))  # fmt: skip
    ap.add_argument("--ref", default=None)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-cprofile", action="store_true")
    a = ap.parse_args(argv)
    if a.ref:
        print(f"turnback at {use_ref(a.ref, HERE / 'work')}")
    from turnback import Store

    ws: Path = a.workspace.resolve()
    store_dir: Path = a.store.resolve()
    out_dir = HERE / "work"
    out_dir.mkdir(exist_ok=True)
    editor = Editor(ws, seed=99)
    changed: dict[str, bytes] = {}

    def open_store() -> Any:
        return Store.open(ws, store_dir=store_dir)

    if a.scenario == "first" or not store_dir.exists():
        shutil.rmtree(store_dir, ignore_errors=True)
        if a.scenario != "first":
            t0 = time.perf_counter()
            open_store().checkpoint(label="setup")
            print(f"(setup: first checkpoint {time.perf_counter() - t0:.1f}s)")

    runs: list[tuple[str, Callable[[], Any]]] = []
    if a.scenario == "first":
        runs.append(("first", lambda: open_store().checkpoint(label="first")))
    elif a.scenario == "noop":
        open_store().checkpoint(label="settle")
        runs.append(("noop", lambda: open_store().checkpoint(label="noop")))
        runs.append(("noop", lambda: open_store().checkpoint(label="noop")))
    elif a.scenario in ("edit10", "edit10cold"):
        store = open_store()
        store.checkpoint(label="base")
        cold = a.scenario == "edit10cold"

        def step(store: Any = store) -> Any:
            return store.checkpoint(label="edit10", dirty=None if cold else set(changed))

        runs += [("edit10", step), ("edit10", step)]  # the edits are made before each run
    else:
        store = open_store()

        def rewind_step(store: Any = store) -> Any:
            return store.rewind(cp_holder[0])

        cp_holder: list[str] = []
        runs.append(("rewind10", rewind_step))
        runs.append(("rewind10", rewind_step))

    for i, (_name, fn) in enumerate(runs):
        if a.scenario in ("edit10", "edit10cold"):
            changed.clear()
            changed.update(editor.edit(10))
            time.sleep(0.1)  # past the stat cache's racy margin
        if a.scenario == "rewind10":
            cp_holder[:] = [open_store().checkpoint(label="rewind base").id]
            editor.edit(10)
        if i == 0:
            profiled(a.scenario, fn, out_dir, a.top)
        elif not a.no_cprofile:
            cprofiled(a.scenario, fn, out_dir, a.top)
        if a.scenario == "first" and not a.no_cprofile:
            shutil.rmtree(store_dir, ignore_errors=True)
            cprofiled(a.scenario, lambda: open_store().checkpoint(label="first"), out_dir, a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
