"""The folder descriptors a rewind holds for its release (``Applier._made_in``, up to 64)
are closed on every way out (redteam21): a ``finish_rewind`` that finds the rewind
finished by another process (its recovery at an open) returned without a release, and a
roll-back whose own writes failed part-way raised past it; each left up to 64
descriptors open for the life of the server, one more set a rewind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.errors import StoreDamaged
from turnback.rewind import apply as rw
from wsutil import second_names, write

from .test_release_moved_folder import _held_in, keeping  # noqa: F401


def _two_folders_rewound(store: Store, ws: Path, *, finish_later: bool) -> None:
    for f in ["a", "b"]:
        write(ws, f"{f}/f", "v1")
    cp = store.checkpoint()
    for f in ["a", "b"]:
        write(ws, f"{f}/f", "v2")
    store.rewind(cp.id, finish_later=finish_later)


def test_a_rewind_another_process_finished_leaves_no_descriptor(
        store: Store, ws: Path, keeping: None) -> None:  # noqa: F811
    _two_folders_rewound(store, ws, finish_later=True)
    assert _held_in(ws) == 2, "one a folder a second name was made in"
    other = Store.open(ws)  # a CLI hook's open: recovers the journal, finishing the rewind
    other.close()
    store.finish_rewind()  # finds it finished
    assert _held_in(ws) == 0, "closed, though the rewind was not this process's to finish"
    assert second_names(ws) == []
    assert (ws / "a" / "f").read_text() == "v1" and (ws / "b" / "f").read_text() == "v1"


def test_a_roll_back_that_fails_part_way_leaves_no_descriptor(
        store: Store, ws: Path, keeping: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    real_apply = rw.Applier.apply
    real_check = rw.Applier._check_replaced

    def saved_meanwhile(dfd: rw.FdFolder, name: str, kept: str, path: str, *rest: object
                        ) -> None:
        if path == "b/f":  # an editor's save lands in the replaced file: the rewind rolls back
            fd = os.open(kept, os.O_WRONLY | os.O_APPEND, dir_fd=dfd.fd)
            os.write(fd, b" saved")
            os.close(fd)
        real_check(dfd, name, kept, path, *rest)  # type: ignore[arg-type]

    def roll_back_fails(self: rw.Applier, plan: rw.Plan, *, strict: bool = True) -> list[str]:
        kept = real_apply(self, plan, strict=strict)
        if not strict:  # the roll-back's: its files written (second names held), then a
            raise OSError(28, "No space left on device")  # later one fails
        return kept

    monkeypatch.setattr(rw.Applier, "_check_replaced", staticmethod(saved_meanwhile))
    monkeypatch.setattr(rw.Applier, "apply", roll_back_fails)
    with pytest.raises(StoreDamaged):
        _two_folders_rewound(store, ws, finish_later=False)
    assert _held_in(ws) == 0, "the roll-back's descriptors closed as it failed"
