"""A red-team pass over trust28's no-replace renames (branch `redteam36`).

Each test puts something at a seam of a rewind's create (``_create``: nothing stood at the
path at the look, ``renameat2(RENAME_NOREPLACE)``) or kills a real child process right
after that rename, and checks that the newcomer is kept untouched, that nothing of the
rewind is left, and that the workspace can still be rewound and undone. These are guards:
each passes on trust28's merge too (the pass found no defect at these seams).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
import turnback.rewind.putback as putback
from turnback import Store
from turnback.fs import exchange
from wsutil import journal_left, second_names

from .seams import (
    BY_PATH,
    N1,
    W1,
    before_the_create,
    changed_since,
    late_write,
    no_replace_here,
    removed_since,
    skip_without_hard_links,
)


def _plant(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "inside.txt").write_bytes(b"the user's\n")
    elif kind == "empty folder":
        path.mkdir()
    else:
        path.symlink_to(path.with_name("nowhere"))  # a dangling link


@pytest.mark.parametrize("kind", ("fifo", "folder", "empty folder", "dangling link"))
def test_a_newcomer_of_any_kind_at_a_created_path_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A FIFO, a folder (empty or not) or a dangling link put at n.txt between the create's
    look and its rename: refused, ``Changed`` naming n.txt, the newcomer as it was, the
    rewind rolled back, no name of the op left; and the rewind goes through once the
    newcomer is gone, and its undo too."""
    if not no_replace_here(tmp_path):
        pytest.skip("no RENAME_NOREPLACE here (or folders by path): docs/RELIABILITY.md")
    ws = tmp_path / "ws"
    store, cp = removed_since(ws)
    try:
        before_the_create(monkeypatch, lambda: _plant(ws / "n.txt", kind))
        with pytest.raises(rw.Changed, match=r"n\.txt"):
            store.rewind(cp)
        monkeypatch.undo()
        st = os.lstat(ws / "n.txt")
        if kind == "fifo":
            assert stat.S_ISFIFO(st.st_mode)
        elif kind == "dangling link":
            assert os.readlink(ws / "n.txt") == str(ws / "nowhere")
        else:
            assert stat.S_ISDIR(st.st_mode)
            assert [p.name for p in (ws / "n.txt").iterdir()] == (
                ["inside.txt"] if kind == "folder" else [])
        assert (ws / "a.txt").read_text() == "a2\n"
        assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "n.txt"]
        assert not journal_left(store.root)
        # the user takes the newcomer away: the same rewind goes through, and is undone
        if kind in ("fifo", "dangling link"):
            (ws / "n.txt").unlink()
        else:
            for p in (ws / "n.txt").iterdir():
                p.unlink()
            (ws / "n.txt").rmdir()
        store.rewind(cp)
        store.finish_rewind()
        assert (ws / "n.txt").read_bytes() == N1 and (ws / "a.txt").read_text() == "a1\n"
        store.undo()
        store.finish_rewind()
        assert not (ws / "n.txt").exists() and (ws / "a.txt").read_text() == "a2\n"
    finally:
        store.close()


def _name_probe(where: Path, name: str) -> bool:
    try:
        (where / name).write_bytes(b"")
    except OSError:
        return False
    (where / name).unlink()
    return True


@pytest.mark.parametrize("name", (b"caf\xe9-latin1.txt", b"l" * 251 + b".txt"),
                         ids=("non-utf8", "255 bytes"))
def test_a_create_of_an_odd_name_goes_through_the_c_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: bytes) -> None:
    """A created path whose name is not UTF-8 (latin-1 from an old tool) or as long as the
    file system takes (255 bytes): the C call gets the very bytes (``os.fsencode``), the
    file comes back under its name, the rewind and its undo whole."""
    ws = tmp_path / "ws"
    ws.mkdir()
    text = os.fsdecode(name)
    if not _name_probe(ws, text):
        pytest.skip("this file system refuses the name")
    calls: list[bytes] = []
    real = exchange._raw_excl

    def counted(dir_fd: int, a: bytes, b: bytes) -> int:
        calls.append(b)
        return real(dir_fd, a, b)

    store, cp = removed_since(ws, text)
    try:
        monkeypatch.setattr(exchange, "_raw_excl", counted)
        store.rewind(cp)
        store.finish_rewind()
        assert (ws / text).read_bytes() == N1
        assert calls == ([] if BY_PATH else [name])
        store.undo()
        store.finish_rewind()
        assert not (ws / text).exists() and (ws / "a.txt").read_text() == "a2\n"
    finally:
        store.close()


def test_a_kill_right_after_the_create_rename_is_recovered(
        tmp_path: Path) -> None:
    """A real ``os._exit`` in a child the instant the no-replace rename put n.txt in
    place (before anything that follows it): the next open's recovery finishes the
    rewind (n.txt the checkpoint's, a.txt too), no journal or temporary name left, and
    the rewind can be undone."""
    if not no_replace_here(tmp_path):
        pytest.skip("no RENAME_NOREPLACE here (or folders by path): docs/RELIABILITY.md")
    ws = tmp_path / "ws"
    store, cp = removed_since(ws)
    store.close()
    pid = os.fork()
    if pid == 0:  # the child: rewinds, killed right after the create's rename
        code = 3
        try:
            real = rw.rename_no_replace

            def then_die(dir_fd: int, folder: str, a: str, b: str) -> bool:
                done = real(dir_fd, folder, a, b)
                if b == "n.txt":
                    os._exit(9 if done else 4)
                return done

            rw.rename_no_replace = then_die  # type: ignore[assignment]
            with Store.open(ws) as child:
                child.rewind(cp)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9  # killed at the seam, not before
    assert (ws / "n.txt").read_bytes() == N1  # the rename happened
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert not journal_left(again.root)
        assert (ws / "n.txt").read_bytes() == N1 and (ws / "a.txt").read_text() == "a1\n"
        assert sorted(p.name for p in ws.iterdir()) == [".turnback", "a.txt", "n.txt"]
        again.undo()
        again.finish_rewind()
        assert not (ws / "n.txt").exists() and (ws / "a.txt").read_text() == "a2\n"


# --- the put back's seams: after its move aside, before the kept file goes in place ---

W2 = b"z4, the user's save in the put back's free moment\n"


def _with_second_names(ws: Path) -> tuple[Store, str]:
    """z.txt and a.txt in a checkpoint, both changed since; skips without hard links."""
    if BY_PATH:
        pytest.skip("no second names where folders are reached by path: no put back")
    skip_without_hard_links(ws)
    return changed_since(ws)


def _after_the_move_aside(then: Callable[[str], None]) -> None:
    real = putback._move_aside

    def moved_then(dfd: rw.Folder, name: str) -> str | None:
        aside = real(dfd, name)
        if name == "z.txt" and aside is not None:
            then(aside)
        return aside

    putback._move_aside = moved_then  # type: ignore[assignment]


def _saved(ws: Path) -> list[bytes]:
    return sorted(p.read_bytes() for p in ws.iterdir() if ".turnback-saved-" in p.name)


def test_a_save_in_the_put_backs_free_moment_stays(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The put back moved the rewind's write aside (the path free) and a save is renamed
    over z.txt before the late write's file goes in place: the save stays at z.txt, the
    late write is saved aside and named in ``Changed``, the rewind's write (a checkpoint's
    bytes) is gone, the rewind rolled back, no name of it left."""
    store, cp = _with_second_names(ws)
    fd = os.open(ws / "z.txt", os.O_WRONLY)
    monkeypatch.setattr(putback, "_move_aside", putback._move_aside)
    late_write(monkeypatch, fd)
    fired: list[str] = []

    def save(aside: str) -> None:
        fired.append(aside)
        (ws / "z.txt.swp").write_bytes(W2)
        os.replace(ws / "z.txt.swp", ws / "z.txt")

    _after_the_move_aside(save)
    try:
        with pytest.raises(rw.Changed, match=r"z\.txt\.turnback-saved-[0-9a-f]{8}"):
            store.rewind(cp)
    finally:
        os.close(fd)
        store.close()
    assert fired
    assert (ws / "z.txt").read_bytes() == W2
    assert _saved(ws) == [W1]
    assert (ws / "a.txt").read_text() == "a2\n"
    assert not journal_left(ws / ".turnback") and not second_names(ws)


def test_a_kill_after_the_put_backs_move_aside_is_recovered(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real ``os._exit`` in a child right after the put back moved the rewind's write
    aside (z.txt free, the late write still at its second name): the next open puts the
    late write back at z.txt; nothing of the user's is lost, no temporary name is left.
    The rewind's write (z1, a checkpoint's bytes) stays at a ``.turnback-saved-`` name
    (docs/RELIABILITY.md, trust28: named by no message)."""
    store, cp = _with_second_names(ws)
    store.close()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(ws / "z.txt", os.O_WRONLY)
            late_write(monkeypatch, fd)
            _after_the_move_aside(lambda aside: os._exit(9))
            with Store.open(ws) as child:
                child.rewind(cp)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    assert not (ws / "z.txt").exists()  # killed in the free moment
    with Store.open(ws) as again:
        assert again.journal_problem is None
        assert not journal_left(again.root)
    assert (ws / "z.txt").read_bytes() == W1
    assert _saved(ws) == [b"z1\n"]
    assert not [n for n in os.listdir(ws) if n.startswith(rw.TMP_PREFIX)]
    assert not second_names(ws)
