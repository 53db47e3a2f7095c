"""A late write's file is put back in place only over what the rewind itself wrote there.

A write landing before a replacement is found in the replaced file, held by its second name
(``Applier._keep_replaced``), and renamed back over the path: by the rewind itself
(``_check_replaced``) or, after a crash, by the next open (``Applier.restore_late``). By
then the path may hold something newer than that write: an editor's save renamed over it
after the rewind's rename, or the user's edit after the crash. That newer file stays; the
older one is kept beside it under a name that says so (``<name>.turnback-saved-<hex>``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
import turnback.rewind.putback as putback
from turnback import Store
from turnback.fs.folders import Folder
from wsutil import journal_left, write

from .seams import (
    W1,
    Killed,
    changed_since,
    late_write,
    late_write_then_kill,
    refuse_put_back,
    skip_without_hard_links,
)

# second names are made only where folders are held by descriptors (not TURNBACK_FS_PATHS=1)
pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="no second names where folders are reached by path")

W2 = b"z4, the user's newest\n"


def _saved(ws: Path, name: str) -> list[bytes]:
    return [p.read_bytes() for p in ws.iterdir()
            if p.name.startswith(f"{name}.turnback-saved-") or p.name.startswith(
                ".turnback-saved-")]


def _prepared(ws: Path, extra: dict[str, str] | None = None) -> tuple[Store, str]:
    skip_without_hard_links(ws)
    return changed_since(ws, extra)


def test_the_next_open_keeps_an_edit_made_after_the_crash(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user edits z.txt after the crash, before the next open: restore_late put the
    older late write over it (the edit was lost)."""
    store, cp = _prepared(ws)
    late_write_then_kill(ws, monkeypatch, store, cp)
    (ws / "z.txt").write_bytes(W2)
    with Store.open(ws) as again:
        assert not journal_left(again.root)
        assert again.journal_problem is None
    assert (ws / "z.txt").read_bytes() == W2
    assert _saved(ws, "z.txt") == [W1]  # the late write too: nothing lost
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]


def test_the_next_open_keeps_a_late_write_when_its_recovery_is_rolled_back(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recovery fails on another path (a file now stands where the plan makes a folder)
    and is rolled back: the roll-back's clean-up deleted the late write's file, which
    restore_late, run after a successful apply only, had not yet put back."""
    store, cp = _prepared(ws, {"sub/new.txt": "new\n"})
    (ws / "sub" / "new.txt").unlink()
    (ws / "sub").rmdir()
    late_write_then_kill(ws, monkeypatch, store, cp)
    (ws / "sub" / "new.txt").unlink()
    (ws / "sub").rmdir()
    (ws / "sub").write_text("a file where the plan makes a folder\n")
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert (ws / "z.txt").read_bytes() == W1
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]


def test_a_save_after_the_rename_is_not_overwritten_by_the_put_back(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """W1 lands before the rename (through a descriptor), then an editor saves W2 by a
    rename over z.txt before the look at the replaced file: the put back renamed W1 over
    W2 (the newest was lost)."""
    store, cp = _prepared(ws)
    fd = os.open(ws / "z.txt", os.O_WRONLY)
    real_entry, real_file_entry = rw.disk_entry, rw._file_entry
    saved_once: list[str] = []

    def editor_saves(dfd: Folder, name: str) -> None:
        if name.startswith(rw.TMP_PREFIX) and not saved_once and (
                ws / "z.txt").read_bytes() == b"z1\n":  # z.txt's look, once renamed
            saved_once.append(name)
            (ws / "z.txt.swp").write_bytes(W2)
            os.replace(ws / "z.txt.swp", ws / "z.txt")

    def editor_saves_first(dfd: Folder, name: str) -> rw.Entry | None:
        editor_saves(dfd, name)
        return real_entry(dfd, name)

    def editor_saves_before_the_read(dfd: Folder, name: str) -> rw.Entry | None:
        editor_saves(dfd, name)  # the look at a second name its lstat found a file
        return real_file_entry(dfd, name)

    late_write(monkeypatch, fd)
    monkeypatch.setattr(rw, "disk_entry", editor_saves_first)
    monkeypatch.setattr(rw, "_file_entry", editor_saves_before_the_read)
    try:
        with pytest.raises(rw.Changed, match=r"z\.txt\.turnback-saved-[0-9a-f]{8}"):
            store.rewind(cp)
    finally:
        os.close(fd)
    assert saved_once
    assert (ws / "z.txt").read_bytes() == W2
    assert _saved(ws, "z.txt") == [W1]
    assert (ws / "a.txt").read_text() == "a2\n"  # the rewind was undone
    assert not journal_left(store.root)
    store.close()


def test_a_late_write_under_a_long_name_that_cannot_be_put_back_is_kept(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The put back fails and ``<name>.turnback-saved-<hex>`` is over NAME_MAX: the file
    kept its temporary name, which the roll-back's clean-up then deleted."""
    skip_without_hard_links(ws)
    long = "z" * 240 + ".txt"
    write(ws, "a.txt", "a1\n")
    write(ws, long, "z1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    write(ws, long, "z2\n")
    real_keep = rw.Applier._keep_replaced

    def before_the_rename(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        if name == long:
            refuse_put_back(monkeypatch, ws, long)
            (ws / long).write_bytes(W1)
        return real_keep(self, dfd, name, *rest)

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)
    with pytest.raises(rw.Unsafe, match=r"\.turnback-saved-[0-9a-f]+") as err:
        store.rewind(cp.id)
    monkeypatch.undo()
    assert _saved(ws, long) == [W1]
    assert "move it back" in str(err.value)
    store.close()


def test_a_saved_name_never_replaces_a_file_standing_there(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved name's hex digits drawn again where a file of that name stands (planted
    or the user's): that file stays."""
    store, cp = _prepared(ws, {"z.txt.turnback-saved-00000000": "the user's own\n"})
    tags = iter(["00000000", "00000000", "11111111"])
    monkeypatch.setattr(putback, "saved_tag", lambda: next(tags))
    real_keep = rw.Applier._keep_replaced

    def before_the_rename(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        if name == "z.txt":
            refuse_put_back(monkeypatch, ws, "z.txt")
            (ws / "z.txt").write_bytes(W1)
        return real_keep(self, dfd, name, *rest)

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)
    with pytest.raises(rw.Unsafe, match=r"z\.txt\.turnback-saved-11111111"):
        store.rewind(cp)
    monkeypatch.undo()
    assert (ws / "z.txt.turnback-saved-00000000").read_bytes() == b"the user's own\n"
    assert (ws / "z.txt.turnback-saved-11111111").read_bytes() == W1
    store.close()


def test_a_planted_kept_name_never_replaces_a_users_file(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a crash, a file named as z.txt's second name is planted (the op id read from
    the journal) while z.txt holds the user's edit: the next open keeps the edit in place."""
    store, cp = _prepared(ws)
    late_write_then_kill(ws, monkeypatch, store, cp)
    for n in os.listdir(ws):
        if n.startswith(rw.TMP_PREFIX):
            os.unlink(ws / n)  # no late write of the user's: only the planted one
    journal = (store.root / "journal.json").read_text()
    import json
    op = json.loads(journal)["id"]
    (ws / f"{rw.TMP_PREFIX}1-{rw.kept_name(op, 'z.txt')}").write_bytes(b"planted\n")
    (ws / "z.txt").write_bytes(W2)
    with Store.open(ws):
        pass
    assert (ws / "z.txt").read_bytes() == W2


def _a_write_during_the_undo(ws: Path, seen: list[str]) -> Callable[..., str | None]:
    """A ``_keep_replaced`` that writes W1 into z.txt before its rename (the rewind stops),
    then into a.txt before the roll-back's rename of it; ``seen`` lists the names kept."""
    real_keep = rw.Applier._keep_replaced

    def before_the_rename(self: rw.Applier, dfd: Folder, name: str, *rest: str) -> str | None:
        seen.append(name)
        if name == "z.txt" and seen.count("z.txt") == 1:
            (ws / "z.txt").write_bytes(W1)  # stops the rewind
        if name == "a.txt" and seen.count("a.txt") == 2:  # the roll-back's
            with open(ws / "a.txt", "r+b") as f:
                f.write(b"a3, written during the undo\n")
        return real_keep(self, dfd, name, *rest)

    return before_the_rename


def test_a_write_during_the_undo_after_changed_is_kept(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """z.txt changed, so the rewind stops and puts a.txt back; a write into a.txt landing
    right before that put back's rename was in the file it replaced, freed after: lost
    (the roll-back looked only before the rename)."""
    store, cp = _prepared(ws)
    seen: list[str] = []
    before_the_rename = _a_write_during_the_undo(ws, seen)

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)
    with pytest.raises(rw.Conflict, match=r"except 'a\.txt', changed again") as err:
        store.rewind(cp)
    assert "z.txt" in str(err.value)
    assert seen.count("a.txt") == 2
    assert (ws / "a.txt").read_bytes() == b"a3, written during the undo\n"
    assert (ws / "z.txt").read_bytes() == W1
    assert not journal_left(store.root)
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]
    store.close()


def test_two_paths_whose_second_names_tie_are_not_swapped_by_the_next_open(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two paths of one folder whose derived tags are alike (8 hex digits: 1 in 2**32 a
    pair, 1% for a rewind of 10,000 files in one folder): after a crash, the next open took
    a.txt's second name for b.txt's and put a.txt's old bytes over b.txt."""
    skip_without_hard_links(ws)
    write(ws, "a.txt", "a1\n")
    write(ws, "b.txt", "b1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    write(ws, "b.txt", "b2\n")
    monkeypatch.setattr(rw, "kept_name", lambda op, path: "0badcafe")

    def killed(self: rw.Applier) -> None:
        raise Killed  # files in place, the second names not yet unlinked

    monkeypatch.setattr(rw.Applier, "release", killed)
    with pytest.raises(Killed):
        store.rewind(cp.id)
    store.close()
    monkeypatch.undo()
    monkeypatch.setattr(rw, "kept_name", lambda op, path: "0badcafe")
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    assert (ws / "a.txt").read_text() == "a1\n"
    assert (ws / "b.txt").read_text() == "b1\n"


def test_a_file_made_where_the_rewind_creates_one_is_kept(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """b.txt is absent at the plan, which creates it; the user makes it before the rewind
    gets there: it is held and looked at after the rename like a replaced file."""
    store, cp = _prepared(ws, {"b.txt": "b1\n"})
    (ws / "b.txt").unlink()
    real_preload = rw.Applier.preload

    def user_makes_it(self: rw.Applier, plan: rw.Plan) -> None:
        assert "b.txt" in plan.create
        (ws / "b.txt").write_text("b, the user's new file\n")
        real_preload(self, plan)

    monkeypatch.setattr(rw.Applier, "preload", user_makes_it)
    with pytest.raises(rw.Changed, match=r"'b\.txt' changed while the rewind ran"):
        store.rewind(cp)
    assert (ws / "b.txt").read_text() == "b, the user's new file\n"
    assert (ws / "a.txt").read_text() == "a2\n"
    assert (ws / "z.txt").read_text() == "z2\n"
    assert not journal_left(store.root)
    store.close()


def test_a_write_during_the_undo_is_kept_when_the_undo_is_killed(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, and the process dies between the undo's rename of a.txt and its look: the
    undo's second names had random digits, which the next open removed unread (the write
    lost); they derive from the op id and the path now, so the next open finds it."""
    store, cp = _prepared(ws)
    real_check = rw.Applier._check_replaced
    seen: list[str] = []
    before_the_rename = _a_write_during_the_undo(ws, seen)

    def killed(dfd: Folder, name: str, *rest: object) -> None:
        if name == "a.txt" and seen.count("a.txt") == 2:
            raise Killed
        real_check(dfd, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rw.Applier, "_keep_replaced", before_the_rename)
    monkeypatch.setattr(rw.Applier, "_check_replaced", staticmethod(killed))
    with pytest.raises(Killed):
        store.rewind(cp)
    monkeypatch.undo()
    assert journal_left(store.root)
    store.close()
    with Store.open(ws) as again:
        assert not journal_left(again.root)
    kept = [(ws / "a.txt").read_bytes(), *_saved(ws, "a.txt")]
    assert b"a3, written during the undo\n" in kept, kept
    assert (ws / "z.txt").read_bytes() == W1
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]
