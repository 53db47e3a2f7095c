"""The benchmark's own parts at small scale: generator, edits, shadow git baseline.

No timing is asserted: these check that the workspace is what SPEC describes and
that the baseline really checkpoints and restores, so the benchmark's figures
compare like with like.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
# the harness, and the probes with tests of their own (wall_sched; pyspy_top, import_costs)
sys.path[:0] = [str(BENCH), str(BENCH / "probes" / "server"), str(BENCH / "probes" / "cli")]

from edits import Editor, text_files  # noqa: E402
from gen_workspace import MARKER, SYMLINKS, Plan, generate  # noqa: E402
from shadow_git import ShadowGit, dir_size  # noqa: E402
from toc import contents, rewritten  # noqa: E402
from wall_sched import runs, split  # noqa: E402

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _plan(files: int = 200, seed: int = 3) -> Plan:
    return Plan(files=files, size_mb=1.0, folders=12, node_modules_files=40, seed=seed)


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    out: dict[str, tuple[bytes, int]] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = (os.readlink(p).encode(), -1)
            else:
                out[rel] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return out


def _tracked(root: Path) -> list[Path]:
    return [
        p
        for p in root.rglob("*")
        if "node_modules" not in p.parts and (p.is_file() or p.is_symlink())
    ]


def test_generator_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    generate(a, _plan(), progress=False)
    generate(b, _plan(), progress=False)
    assert _tree(a) == _tree(b)
    c = tmp_path / "c"
    generate(c, _plan(seed=4), progress=False)
    assert _tree(a) != _tree(c)


def test_generator_shape(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    counts = generate(ws, _plan(files=300), progress=False)
    files = _tracked(ws)
    assert len(files) == counts["files"] == 300
    assert sum(1 for p in files if p.is_symlink()) == SYMLINKS
    assert counts["binary"] > 0
    assert sum(p.stat().st_size for p in files if not p.is_symlink()) == counts["bytes"]
    assert abs(counts["bytes"] - 1024 * 1024) < 0.02 * 1024 * 1024
    folders = [p for p in ws.rglob("*") if p.is_dir() and "node_modules" not in p.parts]
    assert len(folders) == 12
    assert len([p for p in (ws / "node_modules").rglob("*") if p.is_file()]) == 40
    assert "node_modules/" in (ws / ".gitignore").read_text()
    assert (ws / MARKER).exists()
    for p in files:  # symlinks stay inside the workspace
        if p.is_symlink():
            assert p.resolve().is_relative_to(ws.resolve())


def test_editor_changes_k_files_and_reapplies(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    generate(ws, _plan(), progress=False)
    ed = Editor(ws, seed=1)
    before = {rel: (ws / rel).read_bytes() for rel in text_files(ws)}
    changed = ed.edit(7)
    assert len(changed) == 7
    for rel, data in changed.items():
        assert data != before[rel] and len(data) != len(before[rel])
        (ws / rel).write_bytes(before[rel])
    ed.apply(changed)
    assert all((ws / rel).read_bytes() == data for rel, data in changed.items())
    with pytest.raises(ValueError, match="cannot edit"):
        ed.edit(10**6)


@needs_git
def test_shadow_git_checkpoint_and_restore(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    generate(ws, _plan(), progress=False)
    (ws / ".turnback").mkdir()
    (ws / ".turnback" / "object").write_bytes(b"store data")
    sg = ShadowGit(tmp_path / "shadow.git", ws)
    sg.init()
    assert not (ws / ".git").exists()
    first = sg.checkpoint("first")
    files = sg.git("ls-tree", "-r", "--name-only", first.value).stdout.split()
    assert not any(f.startswith(("node_modules/", ".turnback/")) for f in files)
    assert len(files) == 200
    original = _tree(ws)
    ed = Editor(ws, seed=2)
    ed.edit(5)
    (ws / "created.txt").write_text("new")
    victim = next(p for p in _tracked(ws) if p.suffix == ".py")
    victim.unlink()
    second = sg.checkpoint("second")
    assert second.value != first.value
    sg.restore(first.value)
    assert _tree(ws) == original  # edits undone, created file removed, deleted file back
    assert (ws / ".turnback" / "object").read_bytes() == b"store data"
    assert sg.size()["apparent"] > 0
    assert dir_size(sg.git_dir)["files"] > 0


def test_shadow_git_dir_must_be_outside(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside the workspace"):
        ShadowGit(tmp_path / "ws" / ".shadow", tmp_path / "ws")


def test_generator_cli_refuses_foreign_folder(tmp_path: Path) -> None:
    other = tmp_path / "precious"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    res = subprocess.run(
        [sys.executable, str(BENCH / "gen_workspace.py"), str(other), "--files", "50", "--force"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert "refusing" in res.stderr
    assert (other / "keep.txt").read_text() == "mine"


def test_pyspy_summary_counts_own_and_inclusive(tmp_path: Path) -> None:
    from pyspy_top import summarise

    raw = tmp_path / "x.raw"
    raw.write_text(
        "main (a.py:1);scan (s.py:5);stat (s.py:9) 3\n"
        "main (a.py:1);scan (s.py:6) 1\n"
        "worker (t.py:2);compress (p.py:3) 4\n"
    )
    total, own, incl = summarise(raw, lines=False)
    assert total == 8
    assert own["stat (s.py)"] == 3 and own["scan (s.py)"] == 1 and own["compress (p.py)"] == 4
    assert incl["scan (s.py)"] == 4 and incl["main (a.py)"] == 4


def test_plot_reads_the_sweep_medians() -> None:
    pytest.importorskip("matplotlib", reason="the bench extra is not installed")
    from plot import sweep

    got = sweep({"sweep.10.git": [0.5, 0.3, 0.4], "sweep.10.warm": [0.01], "noop.git": [1.0]})
    assert got == {"git": {10: 0.4}, "warm": {10: 0.01}}


def test_toc_lists_level_two_headings_with_githubs_anchors() -> None:
    text = ("# Title\n<!-- toc -->\nold\n<!-- /toc -->\n## Results\n```\n## not a heading\n```\n"
            "### Results\n## Issue 16: the head (`b94cac4`), and 1,000 → 2\n## Results\n")
    block = contents(text)
    assert block.splitlines()[2:] == [
        "- [Results](#results)",
        "- [Issue 16: the head (`b94cac4`), and 1,000 → 2](#issue-16-the-head-b94cac4-and-1000--2)",
        "- [Results](#results-2)",  # the "### Results" took results-1, as on GitHub
    ]
    new = rewritten(text)
    assert "old" not in new and new.endswith("## Results\n")
    assert rewritten(new) == new


class _Recorded:
    """The at-once phase's server, git and editor, each call written to one list."""
    def __init__(self, gc_until: int) -> None:
        self.calls: list[str] = []
        self.gc_until = gc_until  # git's gc "runs" until this many calls were made

    def start_server(self, settle: float) -> None:
        self.calls.append("start")

    def stop_server(self) -> None:
        self.calls.append("stop")

    def server_pid(self) -> int:
        return os.getpid()

    def checkpoint_server(self, label: str) -> tuple[float, str]:
        self.calls.append("turnback")
        return 0.001, "cp"

    def checkpoint(self, label: str) -> object:
        self.calls.append("git")
        return type("Timed", (), {"seconds": 0.2})()

    def gc_running(self) -> bool:
        return len(self.calls) < self.gc_until

    def wait_for_gc(self) -> float:
        self.calls.append("wait gc")
        self.gc_until = 0
        return 0.5

    def edit(self, k: int) -> dict[str, bytes]:
        self.calls.append("edit")
        return {}


def _bench(fake: _Recorded, **args: object) -> Any:
    """``run.Bench`` over ``fake`` (its server, git and editor alike), with ``args``."""
    import argparse

    from run import Bench

    bench = Bench.__new__(Bench)
    bench.args = argparse.Namespace(server_settle=0.0, **args)
    bench.tb = bench.git = bench.editor = fake
    bench.results = {"load": [], "samples": {}, "notes": [], "figures": {}}
    bench.n = 0
    bench._edited = False
    return bench


def test_at_once_rounds_are_timed_after_gits_background_gc() -> None:
    """From a fresh shadow repository the phase's first pair is git's first commit, whose
    detached gc ran through every timed round on two cores (bench/RESULTS.md, "the at-once
    checkpoint's CPU"): the rounds wait for it, and record the server's CPU of each."""
    fake = _Recorded(gc_until=10**6)
    bench = _bench(fake, no_server=False, atonce_rounds=2, repeat=0, no_flush=True)
    bench.atonce()
    first_edit = fake.calls.index("edit")
    assert fake.calls[:4] == ["start", "turnback", "git", "wait gc"]
    assert first_edit == 4
    # the wait is noted, and no timed round ran while git's gc did
    assert [n for n in bench.results["notes"] if "gc" in n] == [
        "waited 0.5s for git's background auto gc after the at-once phase's first checkpoints"]
    samples = bench.results["samples"]
    assert len(samples["edit10.atonce"]) == len(samples["edit10.atonce.serverCpu"]) == 2
    assert all(c >= 0 for c in samples["edit10.atonce.serverCpu"])


def test_a_refs_copy_gets_the_work_trees_built_folder_check_for_the_same_source(
        tmp_path: Path) -> None:
    """``use_ref``'s copy comes from ``git archive``, which holds no built module: an A/B of
    a ref against the work tree compared Python's folder check with C's. The built module
    goes in only beside a byte-identical ``_folderparts.c``."""
    from turnback_side import copy_compiled

    work, same, other = (tmp_path / n / "turnback" / "snapshot" for n in ("w", "s", "o"))
    for d in (work, same, other):
        d.mkdir(parents=True)
    (work / "_folderparts.c").write_bytes(b"int f(void) { return 1; }\n")
    (work / "_folderparts.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF built")
    (same / "_folderparts.c").write_bytes(b"int f(void) { return 1; }\n")
    (other / "_folderparts.c").write_bytes(b"int f(void) { return 2; }\n")

    copied = copy_compiled(tmp_path / "w", tmp_path / "s")
    assert copied == [same / "_folderparts.cpython-311-x86_64-linux-gnu.so"]
    assert copied[0].read_bytes() == b"\x7fELF built"
    assert copy_compiled(tmp_path / "w", tmp_path / "o") == []
    assert sorted(p.name for p in other.iterdir()) == ["_folderparts.c"]
    (same / "_folderparts.c").unlink()  # a ref from before the C module: nothing to pair
    assert copy_compiled(tmp_path / "w", tmp_path / "s") == []


def test_each_round_begins_with_the_disk_written_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Git's commit leaves its rewritten index and objects unsynced, and the next Turnback
    request's ``fdatasync`` waited for their writeback (21.4 against 12.1 ms, bench/RESULTS.md
    "the at-once rows after git's writeback"): a sync before each round's edits, or before a
    request no edits came before; the round's own edits stay unsynced."""
    import run

    fake = _Recorded(gc_until=0)
    monkeypatch.setattr(run.os, "sync", lambda: fake.calls.append("sync"))
    bench = _bench(fake, no_server=False, atonce_rounds=2, repeat=0, no_flush=False)
    bench.atonce()
    calls = [c for c in fake.calls if c in ("sync", "edit", "turnback", "git")]
    # the first pair (no edits): a sync before Turnback's request; each round: a sync, the
    # edits, Turnback's request with them unsynced, git's
    assert calls == ["sync", "turnback", "git"] + ["sync", "edit", "turnback", "git"] * 2


class _Cold(_Recorded):
    """The CLI's phases' Turnback and git too: each request by tool, in one list."""
    def checkpoint_cli(self, label: str) -> tuple[float, str]:
        self.calls.append("turnback")
        return 0.001, "cp"

    def checkpoint_api(self, label: str) -> tuple[float, dict[str, float]]:
        self.calls.append("turnback")
        return 0.001, {"call": 0.0005, "import": 0.0001}

    def rewind_cli(self, cp: str) -> tuple[float, None]:
        self.calls.append("turnback")
        return 0.001, None

    def restore(self, commit: str) -> object:
        self.calls.append("git")
        return type("Timed", (), {"seconds": 0.2})()

    def git(self, *args: str) -> object:
        return type("Done", (), {"stdout": "c0ffee\n"})()

    def apply(self, changed: dict[str, bytes]) -> None:
        self.calls.append("edit")


def test_no_turnback_request_waits_for_gits_unsynced_writes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Git syncs nothing (2.39: no fsync in ``add``, ``commit``, ``reset --hard``), Turnback's
    request does: every Turnback request must come after a sync that followed git's last
    request. The first checkpoint followed ``prepare``'s removal of the last run's shadow
    repository, the cold phase's fresh-``Store.open()`` row git's commit, with no sync; and a
    rewind round left ``_edited`` set, so the next round's checkpoint followed git's
    ``reset --hard`` unsynced (redteam29; fails before)."""
    import run

    fake = _Cold(gc_until=0)
    monkeypatch.setattr(run.os, "sync", lambda: fake.calls.append("sync"))
    bench = _bench(fake, no_server=True, atonce_rounds=0, repeat=2, no_flush=False)
    bench.ws = Path("/nonexistent")  # no file is checked: the fake edits change none
    monkeypatch.setattr(bench, "sizes", lambda key: None, raising=False)
    bench.first()
    bench.cold()
    bench.rewind()
    bench.cold()
    calls = [c for c in fake.calls if c in ("sync", "edit", "turnback", "git")]
    assert calls.count("turnback") == 17
    last = "git"  # ``prepare`` removed the last run's shadow repository, unsynced
    for call in calls:
        if call == "turnback":
            assert last != "git", f"a Turnback request after git's unsynced writes: {calls}"
        if call in ("sync", "git"):
            last = call


def test_import_costs_counts_each_interval_to_the_module_on_top(tmp_path: Path) -> None:
    """``import_costs.count``: the dump closing each interval is counted to the module whose
    body ran then (its nested imports to themselves), the parent's dumps (the pid with the
    most) only."""
    from import_costs import count

    (tmp_path / "marks.txt").write_text("a>\nb>\nb<\na<\nc>\nc<")
    for n, total in enumerate([100, 10, 20, 30, 40, 50], start=1):
        (tmp_path / f"cg.41.{n}").write_text(f"events: Ir\ntotals: {total}\n")
    (tmp_path / "cg.41").write_text("totals: 60\n")  # the part at the exit, after the last
    (tmp_path / "cg.42").write_text("totals: 999\n")  # the child's: no dump of its own
    assert count(tmp_path) == {"(no module: start, work between imports)": 100 + 40 + 60,
                               "a": 10 + 30, "b": 20, "c": 50}


def test_wall_sched_splits_a_request_by_what_the_scheduler_saw() -> None:
    """A made-up ``perf sched timehist --state`` of one request (20 ms from send to answer):
    the loop's thread runs 4 ms, sleeps while another server thread runs 5 ms (a GIL held),
    waits 1 ms for a core, runs 2 ms, waits 2 ms for the disk, runs 6 ms."""
    timehist = """
           time    cpu  task name                       wait time  sch delay   run time  state
     1.004000 [0000]  python[100]                          0.000      0.000      4.000      S
     1.009000 [0001]  python[101/100]                      0.000      0.000      5.000      S
     1.012000 [0000]  python[100]                          6.000      1.000      2.000      D
     1.020000 [0000]  python[100]                          2.000      0.000      6.000      R
     1.020000 [0001]  git[7]                               0.000      0.000      0.010      S
"""
    by_tid: dict[int, list[Any]] = {}
    for r in runs(timehist.splitlines()):
        by_tid.setdefault(r.tid, []).append(r)
    assert {r.pid for r in by_tid[101]} == {100} and by_tid[7][0].pid == 7
    row = split({"monotonic": [1_000_000_000, 1_020_000_000], "wall": 20.0}, by_tid, {100, 101})
    assert row["thread"] == 100
    assert (row["run"], row["queue"], row["sleep"], row["disk"]) == (12.0, 1.0, 5.0, 2.0)
    assert row["othersInSleep"] == 5.0 and row["gilSlices"] == 1
