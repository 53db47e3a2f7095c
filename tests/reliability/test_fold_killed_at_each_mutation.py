"""A server's fold (``Store.fold_held``, fold28: its own log detached, its records put
back, its objects and the small packs ``merging.choose`` picks written into one synced
pack, then the log and those packs removed) killed at each of its file-system mutations
in turn, torn and whole (redteam37). Every boundary must leave every checkpoint's files
readable by the next process, fsck clean, and a next server's look at raw frames left
(``fold_left``) and a gc able to finish the work."""

from __future__ import annotations

import shutil
from pathlib import Path

from turnback import Store
from wsutil import age_tree, write

from .crashkit import Ack, run_child

Expected = dict[str, dict[str, str]]


def _edit(ws: Path, tag: str) -> dict[str, str]:
    files = {f"d{i}/f{i}.txt": f"{tag} line {i}\n" * 300 for i in range(8)}
    for rel, text in files.items():
        write(ws, rel, text)
    age_tree(ws)
    return files


def _prepared(ws: Path) -> Expected:
    """A store with a walk and two folded raw checkpoints (their packs small: the next
    fold takes them with its log)."""
    ws.mkdir(parents=True)
    expected: Expected = {}
    with Store.open(ws, create=True) as store:
        store.objects.raw_held = True
        first = _edit(ws, "walk")
        expected[store.checkpoint(label="walk").id] = first
        for tag in ("one", "two"):
            files = _edit(ws, tag)
            cp = store.checkpoint(dirty=set(files), label=tag)
            expected[cp.id] = {**first, **files}
            assert store.fold_held() is True
            first = expected[cp.id]
    return expected


def _check(ws: Path, expected: Expected, where: str) -> None:
    with Store.open(ws) as store:
        for cp, files in expected.items():
            for rel, text in files.items():
                assert store.file_content(cp, rel).text == text, (where, cp, rel)
        report = store.fsck()
        assert report.ok, (where, report)


def test_a_fold_killed_at_every_step(tmp_path: Path) -> None:
    base = tmp_path / "base" / "ws"
    expected = _prepared(base)
    # the child's held state: a checkpoint whose batch went out raw, not yet folded
    made: dict[str, Store] = {}

    def before(ack: Ack) -> None:
        store = Store.open(made_ws[0])
        store.objects.raw_held = True
        files = _edit(made_ws[0], "three")
        cp = store.checkpoint(dirty=set(files), label="three")
        assert store.objects.unfolded
        made["store"] = store
        ack(f"cp {cp.id}")

    def fold(ack: Ack) -> None:
        ack(f"folded {made['store'].fold_held()}")

    made_ws = [tmp_path / "count" / "ws"]
    shutil.copytree(base, made_ws[0], symlinks=True)
    counted = run_child(fold, before=before)
    assert counted.error is None, counted.error
    assert "folded True" in counted.acks, counted.acks
    steps = counted.steps
    assert steps is not None and steps > 5, steps
    last = {**next(reversed(expected.values())), **_edit(tmp_path / "scratch", "three")}
    shutil.rmtree(tmp_path / "scratch")
    for k in range(1, steps + 1):
        made_ws[0] = tmp_path / f"k{k}" / "ws"
        shutil.copytree(base, made_ws[0], symlinks=True)
        out = run_child(fold, before=before, kill_at=k, seed=k)
        assert out.error is None, (k, out.error)
        assert out.killed, (k, out.acks)
        cps = [a.split()[1] for a in out.acks if a.startswith("cp ")]
        assert len(cps) == 1, (k, out.acks)
        _check(made_ws[0], {**expected, cps[0]: last}, f"killed at step {k} of {steps}")
        # the next server's look, then gc: the work left is finished, nothing lost
        with Store.open(made_ws[0]) as store:
            assert store.fold_left() is not None
            store.gc()
        _check(made_ws[0], {**expected, cps[0]: last}, f"after gc, step {k}")
        shutil.rmtree(tmp_path / f"k{k}")
