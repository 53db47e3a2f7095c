"""The server reads a walk's trees into memory after its answer (``core._then_warm``)."""

from __future__ import annotations

import gc
from pathlib import Path

from turnback import Store
from turnback.objects.trees import DIR, TreeReader
from turnback.server.core import _then_warm


def _entries(reader: TreeReader, tree: str) -> int:
    """Entries of ``tree`` and of every tree below it."""
    return sum(1 + (_entries(reader, e.hash) if e.mode == DIR else 0)
               for e in reader.get(tree).values())


def test_after_a_walk_the_answer_is_followed_by_the_warm_up_and_the_rewind_finish(
    ws: Path,
) -> None:
    for i in range(3):
        (ws / f"d{i}").mkdir()
        (ws / f"d{i}" / "f.txt").write_text(str(i))
    ran: list[str] = []
    with Store.open(ws) as store:
        cp = store.checkpoint()
        assert store.walked and store.trees.held == 0  # a first walk keeps no tree
        entries = _entries(TreeReader(store.objects), cp.tree)
        _then_warm(lambda s: ran.append("finish"))(store)
        assert ran == ["finish"]
        assert not store.walked
        held = 2 * entries  # every folder's entries, each with its line
        assert store.trees.held == held
        _then_warm(None)(store)  # no walk since: nothing more read
        assert store.trees.held == held


def test_the_kept_trees_are_out_of_the_collectors_sight(ws: Path) -> None:
    """A full collection does not walk them (``Entry``, a tuple subclass, stays tracked)."""
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("x")
    with Store.open(ws) as store:
        store.checkpoint()
        frozen = gc.get_freeze_count()
        try:
            _then_warm(None)(store)
            assert gc.get_freeze_count() > frozen
            kept = next(iter(store.trees._cache.values()))
            assert all(o is not kept for o in gc.get_objects()), "a full collection walks it"
        finally:
            gc.unfreeze()


def test_garbage_pending_at_the_freeze_is_not_kept_for_good(ws: Path) -> None:
    """A cycle that became garbage in the oldest generation before a warm-up: frozen with
    the trees it would never be collected (a server freezes after each walk: 10,854 such
    objects after 50 walks, bench/probes/memory/redteam5_freeze.py)."""
    import weakref

    class Cycle:
        me: object

    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("x")
    with Store.open(ws) as store:
        store.checkpoint()
        cycle = Cycle()
        cycle.me = cycle
        gone = weakref.ref(cycle)
        gc.collect()  # alive: to the oldest generation, where only a full collection looks
        del cycle
        try:
            _then_warm(None)(store)
            assert gone() is None, "the garbage cycle was frozen with the trees"
        finally:
            gc.unfreeze()
