"""A red-team pass over `rewind25` (branch `redteam30`): what stands at a replaced file's
path swapped at each seam of its replacement, and a folder on the way swapped for a link
after the conflict check's one look. `rewind25` left one ``lstat`` before the second
name's link, whose result ``_put`` and ``_keep_replaced`` now trust; these tests swap in
what their own looks used to catch, right after it (docs/RELIABILITY.md, "A red-team pass
over `rewind25`"). Most are guards: they pass before `rewind25` (``0863be1``) and after.
The last test, a link or FIFO swapped in and then a crash, failed on `rewind25` (fixed in
``Applier._put``); the one seam that lost a user's file (a new file renamed over the path
between the second name's link and the rename, on ``0863be1`` too), a strict ``xfail``
until `swap27`, is closed by a swap in place of the rename (``fs/exchange.py``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import exchange
from turnback.fs.folders import FdFolder, Folder, PathFolder
from wsutil import journal_left, second_names, swaps_names, write

OUTSIDE = b"outside the workspace\n"


def _swap(kind: str, z: Path, outside: Path) -> None:
    """``z`` made ``kind`` by a user's editor or agent, or by an attacker."""
    if kind == "write":
        with open(z, "r+b") as f:
            f.write(b"z3, written in place\n")
    elif kind == "truncate":
        os.truncate(z, 0)
    elif kind == "new inode":
        z.with_name("z.swp").write_bytes(b"z3, saved by a rename\n")
        os.replace(z.with_name("z.swp"), z)
    elif kind == "chmod":
        os.chmod(z, 0o755)
    else:
        z.unlink()
        if kind == "folder":
            z.mkdir()
            (z / "inner.txt").write_bytes(b"z3, in a folder\n")
        elif kind == "symlink out":
            z.symlink_to(outside)
        elif kind == "fifo":
            os.mkfifo(z)
        elif kind == "hard link out":
            os.link(outside, z)


def _prepared(tmp_path: Path) -> tuple[Path, Path, Store, str]:
    ws, outside = tmp_path / "ws", tmp_path / "outside.txt"
    outside.write_bytes(OUTSIDE)
    write(ws, "a.txt", "a1\n")
    write(ws, "z.txt", "z1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    write(ws, "z.txt", "z2\n")
    return ws, outside, store, cp.id


def _nothing_written_outside(tmp_path: Path, outside: Path) -> None:
    assert outside.read_bytes() == OUTSIDE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.txt", "ws"]


def _what_stands(z: Path) -> tuple[str, bytes]:
    st = z.lstat()
    if stat.S_ISLNK(st.st_mode):
        return "link", os.fsencode(os.readlink(z))
    if stat.S_ISDIR(st.st_mode):
        return "folder", (z / "inner.txt").read_bytes()
    if stat.S_ISFIFO(st.st_mode):
        return "fifo", b""
    return oct(st.st_mode & 0o111), z.read_bytes()


KINDS = ("write", "truncate", "new inode", "chmod", "folder", "symlink out", "fifo",
         "hard link out")


@pytest.mark.parametrize("kind", KINDS)
def test_a_swap_after_the_one_look_stops_the_rewind_and_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Between the write's one ``lstat`` and the second name's link (``_keep_replaced``
    made its own look there before `rewind25`): whatever was swapped in stands at the path
    after the rewind, which stops and is undone; nothing outside is written or linked."""
    ws, outside, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    fired: list[str] = []
    real = rw.Applier._keep_replaced

    def after_the_look(self: rw.Applier, dfd: Folder, name: str, *rest: object) -> str | None:
        if name == "z.txt" and not fired:
            fired.append(name)
            _swap(kind, z, outside)
        return real(self, dfd, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rw.Applier, "_keep_replaced", after_the_look)
    with pytest.raises(rw.Changed, match=r"z\.txt"):
        try:
            store.rewind(cp)
        finally:
            monkeypatch.undo()
            want = _what_stands(z)
    assert fired == ["z.txt"]
    expected = {
        "write": ("0o0", b"z3, written in place\n"), "truncate": ("0o0", b""),
        "new inode": ("0o0", b"z3, saved by a rename\n"), "chmod": ("0o111", b"z2\n"),
        "folder": ("folder", b"z3, in a folder\n"),
        "symlink out": ("link", os.fsencode(outside)), "fifo": ("fifo", b""),
        "hard link out": ("0o0", OUTSIDE)}[kind]
    assert want == expected
    assert (ws / "a.txt").read_text() == "a2\n"  # undone
    assert not journal_left(store.root) and not second_names(ws)
    _nothing_written_outside(tmp_path, outside)
    if kind == "hard link out":
        assert outside.stat().st_nlink == 2  # the user's own link, and no other
    store.close()


@pytest.mark.parametrize("kind", ("symlink out", "fifo", "hard link out", "folder"))
def test_a_link_or_special_file_swapped_in_before_the_rename_leads_nowhere_outside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Between the second name's link and the rename, where there is no swap (refused
    here as a file system without ``RENAME_EXCHANGE`` does; by path there is none): the
    rename replaces a link, a FIFO or a hard link (none holds a byte of the user's that
    the outside file does not keep), or fails on a folder (the rewind undone, the folder
    and its file kept). With the swap: ``test_a_stranger_swapped_out_goes_back_…``."""
    monkeypatch.setattr(exchange, "_raw", lambda *_: errno.EINVAL)
    ws, outside, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    _before_the_rename(monkeypatch, lambda: _swap(kind, z, outside))
    if kind == "folder":
        with pytest.raises(IsADirectoryError):
            store.rewind(cp)
        assert (z / "inner.txt").read_bytes() == b"z3, in a folder\n"
        assert (ws / "a.txt").read_text() == "a2\n"
    else:
        store.rewind(cp)
        assert z.read_bytes() == b"z1\n" and (ws / "a.txt").read_text() == "a1\n"
    assert not journal_left(store.root)
    store.finish_rewind()
    _nothing_written_outside(tmp_path, outside)
    assert outside.stat().st_nlink == 1
    store.close()


def _before_the_rename(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """``swap`` runs once, right before z.txt's replacing rename (after its second name's
    link where one is made)."""
    fired: list[str] = []
    for cls in (FdFolder, PathFolder):
        real = cls.rename

        def renamed(self: Folder, src: str, dst: str,
                    real: Callable[[Folder, str, str], None] = real) -> None:  # type: ignore[assignment]
            if dst == "z.txt" and src.startswith(rw.TMP_PREFIX) and not fired:
                fired.append(dst)
                swap()
            real(self, src, dst)

        monkeypatch.setattr(cls, "rename", renamed)
    real_swap = rw._swap

    def swapped(dfd: FdFolder, a: str, b: str) -> bool:
        if b == "z.txt" and a.startswith(rw.TMP_PREFIX) and not fired:
            fired.append(b)
            swap()
        return real_swap(dfd, a, b)

    monkeypatch.setattr(rw, "_swap", swapped)


@pytest.mark.parametrize("where", ("src", "src/deep"))
def test_a_folder_on_the_way_swapped_for_a_link_after_the_conflict_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """``check_conflicts`` looks at each folder once a call (`rewind25`); a folder it
    found, swapped right after for a link to a folder outside: the apply opens no link
    (``Unsafe``), the rewind is undone, nothing lands outside, the moved files are kept."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    (out / "deep").mkdir(parents=True)
    (out / "b.txt").write_bytes(OUTSIDE)
    files = ("a.txt", "src/b.txt", "src/c.txt", "src/deep/d.txt")
    for p in files:
        write(ws, p, "1\n")
    store = Store.open(ws)
    cp = store.checkpoint().id
    for p in files:
        write(ws, p, "2\n")
    real = rw.check_conflicts

    def then_swapped(*a: object, **k: object) -> None:
        real(*a, **k)  # type: ignore[arg-type]
        os.rename(ws / where, tmp_path / "moved")
        os.symlink(out / where.removeprefix("src").lstrip("/"), ws / where)

    monkeypatch.setattr(rw, "check_conflicts", then_swapped)
    with pytest.raises(rw.Unsafe, match="symlink"):
        store.rewind(cp)
    assert (ws / "a.txt").read_text() == "2\n"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["b.txt", "deep"]
    assert (out / "b.txt").read_bytes() == OUTSIDE
    assert {p.name: p.read_text() for p in (tmp_path / "moved").rglob("*.txt")} == {
        n: "2\n" for n in (["b.txt", "c.txt", "d.txt"] if where == "src" else ["d.txt"])}
    assert not journal_left(store.root)
    store.close()


def test_a_save_renamed_over_the_path_between_the_link_and_the_rename_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor's atomic save (a new file renamed over z.txt) between the second name's
    link and the rewind's rename: the rename replaced it unseen and the save was lost
    (redteam30). Swapped instead, the save comes out at the temporary name, is found not
    to be the file kept, and goes back: ``Changed``, the save at z.txt, the rewind undone.
    Fails before the fix (was the strict xfail)."""
    if not swaps_names(tmp_path):
        pytest.skip("no RENAME_EXCHANGE here (or folders by path): the rename is today's, "
                    "docs/RELIABILITY.md says what it leaves")
    ws, outside, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    _before_the_rename(monkeypatch, lambda: _swap("new inode", z, outside))
    try:
        with pytest.raises(rw.Changed, match=r"z\.txt"):
            store.rewind(cp)
        assert z.read_bytes() == b"z3, saved by a rename\n"
        assert (ws / "a.txt").read_text() == "a2\n"  # undone
        assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "z.txt"]
        assert not journal_left(store.root) and not second_names(ws)
    finally:
        store.close()


@pytest.mark.parametrize("kind", ("symlink out", "fifo", "hard link out", "folder"))
def test_a_stranger_swapped_out_goes_back_and_stops_the_rewind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """The swap's other outcomes: a link, a FIFO, a hard link to a file outside or a folder
    put at z.txt between the link and the rename comes out at the temporary name, is found
    not to be the file kept, and goes back by a second swap (a rename replaced the first
    three and failed on the folder with ``IsADirectoryError``). Nothing written outside."""
    if not swaps_names(tmp_path):
        pytest.skip("no RENAME_EXCHANGE here (or folders by path): the rename's outcomes "
                    "are test_a_link_or_special_file_swapped_in_before_the_rename_…")
    ws, outside, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    _before_the_rename(monkeypatch, lambda: _swap(kind, z, outside))
    try:
        with pytest.raises(rw.Changed, match=r"z\.txt"):
            store.rewind(cp)
        assert _what_stands(z) == {
            "symlink out": ("link", os.fsencode(outside)), "fifo": ("fifo", b""),
            "hard link out": ("0o0", OUTSIDE),
            "folder": ("folder", b"z3, in a folder\n")}[kind]
        assert (ws / "a.txt").read_text() == "a2\n"
        assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "z.txt"]
        assert not journal_left(store.root) and not second_names(ws)
    finally:
        store.close()
    _nothing_written_outside(tmp_path, outside)
    assert outside.stat().st_nlink == (2 if kind == "hard link out" else 1)


def test_a_file_system_that_refuses_the_swap_renames_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``EINVAL`` (a file system without ``RENAME_EXCHANGE``): each file is renamed into
    place as before the swap, the rewind whole and exact, no name left behind."""
    calls: list[bytes] = []

    def refused(dir_fd: int, a: bytes, b: bytes) -> int:
        calls.append(b)
        return errno.EINVAL

    monkeypatch.setattr(exchange, "_raw", refused)
    ws, _outside, store, cp = _prepared(tmp_path)
    try:
        store.rewind(cp)
        store.finish_rewind()
        assert (ws / "a.txt").read_text() == "a1\n" and (ws / "z.txt").read_text() == "z1\n"
        assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "z.txt"]
        assert not journal_left(store.root)
    finally:
        store.close()
    # asked once a replaced file where second names are made (descriptors), never by path
    assert calls == ([] if os.environ.get("TURNBACK_FS_PATHS") == "1"
                     else [b"a.txt", b"z.txt"])


class _Killed(BaseException):
    """The process dies here: no roll-back, the journal stays for the next open."""


@pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                    reason="no second names where folders are reached by path")
@pytest.mark.parametrize("kind", ("symlink out", "fifo"))
@pytest.mark.parametrize("killed", ("before the rename", "after the rename"))
def test_a_link_swapped_in_after_the_one_look_gets_no_second_name_a_crash_leaves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, killed: str) -> None:
    """Since `rewind25` the second name is linked on the strength of the write's one look:
    a link or FIFO swapped in since got one (``link`` makes it of what stands). Killed
    then, the next open left it for good (``_of_op`` takes a link or FIFO under a second
    name's name for the user's) and, killed after the rename, left the user's link only
    under that temporary name, the path holding the rewind's write. Fails before the fix."""
    ws, outside, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    real_keep = rw.Applier._keep_replaced

    def after_the_look(self: rw.Applier, dfd: Folder, name: str, *rest: object) -> str | None:
        if name == "z.txt":
            _swap(kind, z, outside)
        return real_keep(self, dfd, name, *rest)  # type: ignore[arg-type]

    real_rename, real_check = FdFolder.rename, rw.Applier._check_replaced

    def rename(self: FdFolder, src: str, dst: str) -> None:
        if dst == "z.txt" and src.startswith(rw.TMP_PREFIX) and killed == "before the rename":
            raise _Killed
        real_rename(self, src, dst)

    def check(dfd: Folder, name: str, *rest: object) -> None:
        if name == "z.txt" and killed == "after the rename":
            raise _Killed
        real_check(dfd, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rw.Applier, "_keep_replaced", after_the_look)
    monkeypatch.setattr(FdFolder, "rename", rename)
    monkeypatch.setattr(rw.Applier, "_check_replaced", staticmethod(check))
    try:
        with pytest.raises((_Killed, rw.Changed)):
            store.rewind(cp)
    finally:
        monkeypatch.undo()
        store.close()
    with Store.open(ws) as again:  # a crash's recovery, or nothing left to do
        assert not journal_left(again.root) and again.journal_problem is None
    assert _what_stands(z) == (("link", os.fsencode(outside)) if kind == "symlink out"
                               else ("fifo", b""))
    assert [p.name for p in ws.iterdir() if p.name.startswith(rw.TMP_PREFIX)] == []
    _nothing_written_outside(tmp_path, outside)
