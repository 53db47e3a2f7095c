"""No rename of a rewind replaces a save made since its look (branch `trust28`).

A create (nothing stood at the path at the look) was a plain rename, and a put back of a
late write's file (``putback.put_back``, by the rewind or by recovery's ``restore_late``)
a rename over the rewind's own write, looked at just before: a save renamed over the path
in between was replaced, its bytes in no checkpoint. Each test saves at that seam, hooked
where it is the same before and after the fix: the write's ``chmod`` (after the create's
look, before its rename) and the put back's look at the path (``rw.disk_entry``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import exchange
from turnback.fs.folders import Folder
from wsutil import journal_left, second_names

from .seams import (
    BY_PATH,
    N1,
    W1,
    before_the_create,
    changed_since,
    late_write,
    late_write_then_kill,
    no_replace_here,
    removed_since,
    skip_without_hard_links,
)

SAVE = b"n2, the user's save\n"
W2 = b"z4, the user's save after the put back's look\n"


def _save(path: Path, kind: str, outside: Path) -> None:
    """``path`` made by an editor's atomic save, an agent's write, or an attacker's link."""
    if kind == "renamed":
        path.with_name(path.name + ".swp").write_bytes(SAVE)
        os.replace(path.with_name(path.name + ".swp"), path)
    elif kind == "written":
        path.write_bytes(SAVE)
    else:
        path.symlink_to(outside)


@pytest.fixture
def created(tmp_path: Path) -> Iterator[tuple[Path, Store, str]]:
    """A workspace whose last checkpoint holds n.txt, since removed, and a.txt, changed:
    a rewind to it creates n.txt and writes a.txt."""
    ws = tmp_path / "ws"
    store, cp = removed_since(ws)
    try:
        yield ws, store, cp
    finally:
        store.close()


@pytest.mark.parametrize("kind", ("renamed", "written", "symlink out"))
def test_a_save_at_a_created_path_before_its_rename_is_kept(
        tmp_path: Path, created: tuple[Path, Store, str], monkeypatch: pytest.MonkeyPatch,
        kind: str) -> None:
    """A save (or a link) put at n.txt between the create's look and its rename: a plain
    rename replaced it (the save lost, the link gone). Now refused (``EEXIST``): ``Changed``
    naming n.txt, the newcomer untouched, the rewind rolled back, no name left. Fails
    before the fix (the rewind went through, n.txt the checkpoint's)."""
    ws, store, cp = created
    if not no_replace_here(tmp_path):
        pytest.skip("no RENAME_NOREPLACE here (or folders by path): the create is a rename, "
                    "docs/RELIABILITY.md says what it leaves")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"outside\n")
    before_the_create(monkeypatch, lambda: _save(ws / "n.txt", kind, outside))
    with pytest.raises(rw.Changed, match=r"n\.txt"):
        store.rewind(cp)
    if kind == "symlink out":
        assert os.readlink(ws / "n.txt") == str(outside)
        assert outside.read_bytes() == b"outside\n"
    else:
        assert (ws / "n.txt").read_bytes() == SAVE
    assert (ws / "a.txt").read_text() == "a2\n"  # rolled back
    assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "n.txt"]
    assert not journal_left(store.root)


def test_a_file_system_that_refuses_the_flag_creates_as_before(
        created: tuple[Path, Store, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``EINVAL`` (a file system without ``RENAME_NOREPLACE``): the create is renamed into
    place as before, the rewind whole; the flag asked once per created file, never by
    path."""
    ws, store, cp = created
    calls: list[bytes] = []

    def refused(dir_fd: int, a: bytes, b: bytes) -> int:
        calls.append(b)
        return errno.EINVAL

    monkeypatch.setattr(exchange, "_raw_excl", refused)
    store.rewind(cp)
    store.finish_rewind()
    assert (ws / "n.txt").read_bytes() == N1 and (ws / "a.txt").read_text() == "a1\n"
    assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "n.txt"]
    assert not journal_left(store.root)
    assert calls == ([] if BY_PATH else [b"n.txt"])


# --- the put back of a late write's file over the rewind's own write ---

needs_second_names = pytest.mark.skipif(
    BY_PATH, reason="no second names where folders are reached by path: no put back")


def _late_write(ws: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """W1 lands in z.txt through a descriptor held open, right before its replacement
    (``seams.late_write``). Returns the descriptor."""
    fd = os.open(ws / "z.txt", os.O_WRONLY)
    late_write(monkeypatch, fd)
    return fd


def _save_after_the_look(ws: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The user saves W2 over z.txt by a rename right after the put back looked at z.txt
    and found the rewind's write (z1) there. Returns a list that gets one item when it
    fired."""
    real = rw.disk_entry
    fired: list[int] = []

    def looked_then_saved(dfd: Folder, name: str) -> rw.Entry | None:
        got = real(dfd, name)
        if name == "z.txt" and not fired and (ws / "z.txt").read_bytes() == b"z1\n":
            fired.append(1)
            (ws / "z.txt.swp").write_bytes(W2)
            os.replace(ws / "z.txt.swp", ws / "z.txt")
        return got

    monkeypatch.setattr(rw, "disk_entry", looked_then_saved)
    return fired


def _saved(ws: Path) -> list[bytes]:
    return sorted(p.read_bytes() for p in ws.iterdir() if ".turnback-saved-" in p.name)


def _prepared(ws: Path) -> tuple[Store, str]:
    skip_without_hard_links(ws)
    return changed_since(ws)


@needs_second_names
def test_a_save_after_the_put_backs_look_is_not_replaced(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewind finds W1 in the replaced file and puts it back over its own write; a save
    renamed over z.txt right after that look: the put back's rename replaced it (W2 lost).
    Now the rewind's write is moved aside and looked at there: it is W2, which goes back;
    W1 is saved aside, named in ``Changed``. Fails before the fix (z.txt held W1)."""
    store, cp = _prepared(ws)
    fd = _late_write(ws, monkeypatch)
    fired = _save_after_the_look(ws, monkeypatch)
    try:
        with pytest.raises(rw.Changed, match=r"z\.txt\.turnback-saved-[0-9a-f]{8}"):
            store.rewind(cp)
    finally:
        os.close(fd)
    assert fired
    assert (ws / "z.txt").read_bytes() == W2
    assert _saved(ws) == [W1]
    assert (ws / "a.txt").read_text() == "a2\n"  # rolled back
    assert not journal_left(store.root) and not second_names(ws)
    store.close()


@needs_second_names
def test_a_save_after_recoverys_look_is_not_replaced(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewind killed after z.txt's swap, before its look at the replaced file (holding
    W1); the next open's ``restore_late`` puts W1 back over the rewind's write, and a save
    renamed over z.txt right after its look was replaced (W2 lost). Now W2 stays and W1 is
    saved aside. Fails before the fix (z.txt held W1)."""
    store, cp = _prepared(ws)
    late_write_then_kill(ws, monkeypatch, store, cp)
    fired = _save_after_the_look(ws, monkeypatch)
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert fired
    assert (ws / "z.txt").read_bytes() == W2
    assert _saved(ws) == [W1]
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]
