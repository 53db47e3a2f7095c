"""How often a rewind looks at each file it replaces (branch `rewind25`): the write's own
``lstat`` of the path is the only one before its second name is linked (``_put`` and
``_keep_replaced`` each made theirs again), and the second name's ``lstat`` after its
link is also the look after the rename (``_check_replaced``'s ``disk_entry`` made
another). Nothing a look guards is given up: the tests of a late write
(``test_late_writes.py``, ``test_late_write_put_back.py``) and of a FIFO swapped in
(``test_file_swapped_for_a_fifo.py``) run the same code."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs.folders import FdFolder
from turnback.fs.rewindnames import PREFIX
from wsutil import keeps_replaced, swaps_names, write

PATHS = ("d/e/a.txt", "d/f/b.txt", "c.txt")


def test_each_replaced_file_and_its_second_name_are_looked_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    for p in PATHS:
        write(ws, p, "v1\n")
    if not keeps_replaced(ws):
        pytest.skip("no second names here (folders reached by path, or no hard links)")
    swapped = swaps_names(ws)
    with Store.open(ws) as store:
        cp = store.checkpoint()
        for p in PATHS:
            write(ws, p, "v2\n")
        looks: Counter[str] = Counter()
        real = FdFolder.lstat

        def counted(self: FdFolder, name: str) -> object:
            looks[PREFIX if name.startswith(PREFIX) else name] += 1
            return real(self, name)

        monkeypatch.setattr(FdFolder, "lstat", counted)
        res = store.rewind(cp.id, finish_later=True)  # the release (after the answer) apart
        monkeypatch.undo()
        store.finish_rewind()
    assert sorted(res.written) == sorted(PATHS)
    for p in PATHS:
        assert (ws / p).read_text() == "v1\n"
    # one look a replaced file's name (there were three), one a second name (there were two)
    # and, where the write is swapped into place (swap27), one at what the swap took out
    assert {n: looks[n] for n in ("a.txt", "b.txt", "c.txt")} == {
        "a.txt": 1, "b.txt": 1, "c.txt": 1}, looks
    assert looks[PREFIX] == len(PATHS) * (2 if swapped else 1), looks


def test_the_conflict_check_looks_at_each_folder_on_the_way_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check_conflicts`` looked at every folder above each path, once a path: ``d`` three
    times and ``d/e`` twice for these three files. Each is looked at once now; what it
    refuses is unchanged (its tests: ``tests/rewind/test_rewind.py``)."""
    import turnback.rewind.apply as rw

    ws = tmp_path / "ws"
    for p in PATHS:
        write(ws, p, "v1\n")
    write(ws, "d/e/more.txt", "v1\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        for p in [*PATHS, "d/e/more.txt"]:
            write(ws, p, "v2\n")
        looked: Counter[str] = Counter()
        real_lstat, real_check = rw.os.lstat, rw.check_conflicts
        inside: list[bool] = []

        def counted(path: str, *a: object, **k: object) -> object:
            if inside:
                looked[Path(path).relative_to(ws).as_posix()] += 1
            return real_lstat(path, *a, **k)  # type: ignore[arg-type]

        def check(*a: object, **k: object) -> None:
            inside.append(True)
            try:
                real_check(*a, **k)  # type: ignore[arg-type]
            finally:
                inside.clear()

        monkeypatch.setattr(rw.os, "lstat", counted)
        monkeypatch.setattr(rw, "check_conflicts", check)
        store.rewind(cp.id)
        monkeypatch.undo()
    assert looked, "the conflict check ran"
    assert {p: n for p, n in looked.items() if n != 1} == {}, looked
    assert set(looked) == {"d", "d/e", "d/f", *PATHS, "d/e/more.txt"}
