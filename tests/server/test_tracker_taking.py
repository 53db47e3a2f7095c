"""A checkpoint's own flush of the watcher pokes no preparer (``DirtyTracker.taking``)."""

from __future__ import annotations

import threading

from turnback.server.watching.dirty import DirtyTracker


def _tracker() -> tuple[DirtyTracker, list[int]]:
    tracker = DirtyTracker()
    tracker.watching(True)
    assert tracker.take().paths is None  # the walk that makes the set trusted
    pokes: list[int] = []
    tracker.on_add = lambda: pokes.append(threading.get_ident())
    return tracker, pokes


def test_paths_added_by_the_taking_thread_poke_nothing_and_are_taken() -> None:
    tracker, pokes = _tracker()
    with tracker.taking():
        tracker.add({"a.txt", "b/c.txt"})
    assert pokes == []
    assert tracker.take().paths == frozenset({"a.txt", "b/c.txt"})
    tracker.add({"d.txt"})  # after it: the watcher's ordinary report
    assert pokes == [threading.get_ident()]


def test_another_threads_paths_still_poke_while_one_takes() -> None:
    tracker, pokes = _tracker()
    with tracker.taking():
        other = threading.Thread(target=tracker.add, args=({"e.txt"},))
        other.start()
        other.join()
    assert len(pokes) == 1 and pokes[0] != threading.get_ident()
    assert tracker.take().paths == frozenset({"e.txt"})


def test_a_failed_flush_leaves_the_thread_poking_again() -> None:
    tracker, pokes = _tracker()
    try:
        with tracker.taking():
            raise OSError("the inotify read failed")
    except OSError:
        pass
    tracker.add({"f.txt"})
    assert pokes == [threading.get_ident()]
