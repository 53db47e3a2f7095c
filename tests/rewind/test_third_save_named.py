"""A third save during a put back: every file set aside is named (trust29).

The rewind finds a late write (W1) in the file it replaced and puts it back over its own
write: that write is moved aside first and looked at there (``putback.put_back``). A save
(W2) renamed over the path after the look is what was moved aside, so it goes back; a third
(W3) put at the path in between keeps it from going back. W2 then stayed at a
``.turnback-saved-<hex>`` name that no message gave (trust28's open item). Now it is given
the path's saved name and ``Changed`` names it beside W1's. The seam is hooked: the saves
are made inside ``putback._move_aside``, before and after its rename.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback.fs.folders import Folder
from turnback.rewind import putback
from wsutil import journal_left, second_names

from .seams import W1, changed_since, late_write, saved_over, set_aside, skip_without_hard_links

W2 = b"z4, a save renamed over the path after the put back's look\n"
W3 = b"z5, a save put at the path while it was free\n"

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="no second names where folders are reached by path: "
                                       "no put back")


def test_a_second_save_kept_from_its_path_by_a_third_is_named(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skip_without_hard_links(ws)
    store, cp = changed_since(ws)

    fd = os.open(ws / "z.txt", os.O_WRONLY)
    real_aside = putback._move_aside
    fired: list[str] = []

    def two_saves(dfd: Folder, name: str) -> str | None:
        if name != "z.txt" or fired or (ws / "z.txt").read_bytes() != b"z1\n":
            return real_aside(dfd, name)
        saved_over(ws, W2)  # after the put back's look found the rewind's write
        got = real_aside(dfd, name)  # W2 moved aside
        fired.append("yes")
        saved_over(ws, W3)  # the path free: a third save lands there
        return got

    late_write(monkeypatch, fd)
    monkeypatch.setattr(putback, "_move_aside", two_saves)
    try:
        with pytest.raises(rw.Changed) as got:
            store.rewind(cp)
    finally:
        os.close(fd)
    assert fired
    assert (ws / "z.txt").read_bytes() == W3
    held, named = set_aside(ws, str(got.value))
    assert sorted(held.values()) == sorted([W1, W2])  # nothing lost
    assert named == set(held), (str(got.value), held)  # and each found by the message
    assert all(n.startswith("z.txt.turnback-saved-") for n in held)
    assert (ws / "a.txt").read_text() == "a2\n"  # rolled back
    assert not journal_left(store.root) and not second_names(ws)
    store.close()
