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
import re
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs.folders import Folder
from turnback.rewind import putback
from wsutil import journal_left, second_names, write

from .seams import W1, late_write, skip_without_hard_links

W2 = b"z4, a save renamed over the path after the put back's look\n"
W3 = b"z5, a save put at the path while it was free\n"

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="no second names where folders are reached by path: "
                                       "no put back")


def _save(ws: Path, data: bytes) -> None:
    (ws / "z.txt.swp").write_bytes(data)
    os.replace(ws / "z.txt.swp", ws / "z.txt")


def test_a_second_save_kept_from_its_path_by_a_third_is_named(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws, "a.txt", "a1\n")
    write(ws, "z.txt", "z1\n")
    skip_without_hard_links(ws)
    store = Store.open(ws)
    cp = store.checkpoint().id
    write(ws, "a.txt", "a2\n")
    write(ws, "z.txt", "z2\n")

    fd = os.open(ws / "z.txt", os.O_WRONLY)
    real_aside = putback._move_aside
    fired: list[str] = []

    def two_saves(dfd: Folder, name: str) -> str | None:
        if name != "z.txt" or fired or (ws / "z.txt").read_bytes() != b"z1\n":
            return real_aside(dfd, name)
        _save(ws, W2)  # after the put back's look found the rewind's write
        got = real_aside(dfd, name)  # W2 moved aside
        fired.append("yes")
        _save(ws, W3)  # the path free: a third save lands there
        return got

    late_write(monkeypatch, fd)
    monkeypatch.setattr(putback, "_move_aside", two_saves)
    try:
        with pytest.raises(rw.Changed) as got:
            store.rewind(cp)
    finally:
        os.close(fd)
    assert fired
    message = str(got.value)
    assert (ws / "z.txt").read_bytes() == W3
    named = {Path(p).name for p in re.findall(r"'([^']*turnback-saved-[0-9a-f]{8})'", message)}
    held = {p.name: p.read_bytes() for p in ws.iterdir() if "turnback-saved-" in p.name}
    assert sorted(held.values()) == sorted([W1, W2])  # nothing lost
    assert named == set(held), (message, held)  # and each found by the message
    assert all(n.startswith("z.txt.turnback-saved-") for n in held)
    assert (ws / "a.txt").read_text() == "a2\n"  # rolled back
    assert not journal_left(store.root) and not second_names(ws)
    store.close()
