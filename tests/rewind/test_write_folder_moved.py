"""A folder a rewind writes into, renamed (in the workspace, out of it) or swapped for a
link after the rewind's first write there (branch `redteam46`, red team of `rewind34`).

``rewind34`` held each folder's descriptor for the whole apply: the rewind's later files of
that folder went where the folder now was (out of the workspace, or under another name),
and the rewind answered that it wrote them at paths that no longer held them. Before it,
each path was walked from the root: the next file's path was missing, ``Changed``, the
rewind rolled back. Each held folder is now looked at again, by name in its held parent,
before it serves another path: moved or swapped, it is opened afresh, as before."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from turnback import Store
from turnback.errors import TurnbackError
from turnback.rewind import apply as rw
from wsutil import write

PATHS = ("d/e/a.txt", "d/e/b.txt", "d/e/c.txt", "d/e/g/h.txt")


def _moved_to_outside(ws: Path, out: Path) -> None:
    os.rename(ws / "d/e", out)


def _moved_inside(ws: Path, out: Path) -> None:
    os.rename(ws / "d/e", ws / "d/moved")


def _swapped_for_a_link(ws: Path, out: Path) -> None:
    os.rename(ws / "d/e", out)
    os.symlink(out, ws / "d/e")


def _parent_moved_out(ws: Path, out: Path) -> None:
    os.rename(ws / "d", out)


MOVES: list[Callable[[Path, Path], None]] = [
    _moved_to_outside, _moved_inside, _swapped_for_a_link, _parent_moved_out]


def _rewind_moving_after_the_first_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        move: Callable[[Path, Path], None]) -> TurnbackError:
    """Four files in ``d/e`` and ``d`` written, checkpointed, changed; a rewind to the
    checkpoint whose first file written is followed by ``move(ws, outside)``: the rewind's
    refusal (it must refuse)."""
    ws, out = tmp_path / "ws", tmp_path / "outside"
    for p in PATHS:
        write(ws, p, "v1\n")
    with Store.open(ws) as store:
        cp = store.checkpoint()
        for p in PATHS:
            write(ws, p, "v2\n")
        real = rw.Applier._put
        calls = [0]

        def put_then_move(self: rw.Applier, root: Any, path: str, *a: Any,
                          **k: Any) -> None:
            real(self, root, path, *a, **k)
            calls[0] += 1
            if calls[0] == 1:  # after the first file written in d/e
                move(ws, out)

        monkeypatch.setattr(rw.Applier, "_put", put_then_move)
        with pytest.raises(TurnbackError) as raised:
            store.rewind(cp.id)
        monkeypatch.undo()
    return raised.value


@pytest.mark.parametrize("move", MOVES, ids=lambda m: m.__name__.strip("_"))
def test_a_folder_moved_during_the_writes_gets_no_more_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        move: Callable[[Path, Path], None]) -> None:
    _rewind_moving_after_the_first_write(tmp_path, monkeypatch, move)
    # the first file was written before the move (as before rewind34); none after it
    written_out = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.txt")
                         if ".turnback" not in p.parts and p.read_text() == "v1\n")
    assert len(written_out) <= 1, written_out
    # the rest still hold what the user had, wherever the move put them
    v2 = [p for p in tmp_path.rglob("*.txt") if ".turnback" not in p.parts
          and p.read_text() == "v2\n"]
    assert len(v2) == 3, v2


def test_a_link_swapped_in_for_a_held_folder_is_named_by_its_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal names the folder's path in the workspace (``'d/e' is a symlink``): a
    step opened from a held parent named only its last name (``'e'``), which in a large
    workspace tells the user nothing of where to look."""
    raised = _rewind_moving_after_the_first_write(tmp_path, monkeypatch, _swapped_for_a_link)
    assert "'d/e' is a symlink" in str(raised), str(raised)
    assert "'e' is" not in str(raised), str(raised)
