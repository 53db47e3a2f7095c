"""A put back whose save, moved aside, cannot go back for another reason than a third save
(redteam38's pass over trust29).

``putback.put_back`` moves the rewind's write aside and looks at it there; a save renamed
over the path after the look (W2) is what was moved, and it goes back. trust29 named W2
where a third save kept it from going back (``FileExistsError``), but any other refusal of
that rename (``EIO`` here, hooked) left W2 at a ``.turnback-saved-<hex>`` name that no
message gave: the error named only the late write's saved name. Now W2 gets the path's
saved name and is named, whatever kept it from its path.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback.errors import TurnbackError
from turnback.fs.folders import Folder
from turnback.rewind import putback
from wsutil import journal_left

from .seams import W1, changed_since, late_write, saved_over, set_aside, skip_without_hard_links

W2 = b"z4, a save renamed over the path after the put back's look\n"

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="no second names where folders are reached by path: "
                                       "no put back")


def _second_save_kept_from_its_path(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                    refuse_save_aside: bool) -> None:
    """Rewind a.txt and z.txt, W1 landing late in z.txt; W2 saved over z.txt after the put
    back's look is what is moved aside, and its rename back is refused (``EIO``); with
    ``refuse_save_aside``, ``put_back``'s own ``save_aside`` too. The rewind must fail
    naming every file set aside, lose nothing and roll back."""
    skip_without_hard_links(ws)
    store, cp = changed_since(ws)

    fd = os.open(ws / "z.txt", os.O_WRONLY)
    real_aside = putback._move_aside
    real_rename = putback._rename_no_replace
    fired: list[str] = []

    def one_save(dfd: Folder, name: str) -> str | None:
        if name != "z.txt" or fired or (ws / "z.txt").read_bytes() != b"z1\n":
            return real_aside(dfd, name)
        saved_over(ws, W2)  # after the put back's look
        got = real_aside(dfd, name)
        fired.append(got or "")
        return got

    def refused_back(dfd: Folder, src: str, dst: str) -> None:
        if fired and src == fired[0] and dst == "z.txt":
            raise OSError(errno.EIO, os.strerror(errno.EIO), dst)
        real_rename(dfd, src, dst)

    def refused_aside(dfd: Folder, kept: str, name: str) -> str:
        raise OSError(errno.EIO, os.strerror(errno.EIO), kept)  # put_back's, both times

    late_write(monkeypatch, fd)
    monkeypatch.setattr(putback, "_move_aside", one_save)
    monkeypatch.setattr(putback, "_rename_no_replace", refused_back)
    if refuse_save_aside:
        monkeypatch.setattr(putback, "save_aside", refused_aside)
    try:
        with pytest.raises(TurnbackError) as got:
            store.rewind(cp)
    finally:
        os.close(fd)
    assert fired
    held, named = set_aside(ws, str(got.value))
    assert sorted(held.values()) == sorted([W1, W2])  # nothing lost
    assert named == set(held), (str(got.value), held)  # W2's name was in no message before
    assert (ws / "a.txt").read_text() == "a2\n"
    assert not journal_left(store.root)
    store.close()


def test_a_second_save_that_cannot_go_back_is_named(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _second_save_kept_from_its_path(ws, monkeypatch, refuse_save_aside=False)


def test_two_saves_aside_refused_in_one_put_back_are_both_named(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second save cannot go back (``EIO``) nor take the path's saved name, and the
    late write's own ``save_aside`` in ``put_back`` is refused too: the ``Unsafe`` named
    the late write's name only, W2 left at a ``.turnback-saved-<hex>`` name no message gave
    (redteam38's open item). Both are named now."""
    _second_save_kept_from_its_path(ws, monkeypatch, refuse_save_aside=True)
