"""A red-team pass over `swap27` (branch `redteam34`): the second half of the rewind's swap.
A save renamed over a replaced file's path comes out at the temporary name and goes back by
a second swap (``Applier._stranger_out``). What if that second swap fails, or the path is
changed again between the two? docs/RELIABILITY.md, "A red-team pass over `swap27`"."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import turnback.rewind.apply as rw
from turnback import Store
from turnback.fs import exchange
from wsutil import journal_left, second_names, swaps_names, write

SAVE = b"z3, saved by the user's editor\n"


@pytest.fixture
def swapping(tmp_path: Path) -> None:
    if not swaps_names(tmp_path):
        pytest.skip("no RENAME_EXCHANGE here (or folders by path): no second swap to probe")


def _prepared(tmp_path: Path) -> tuple[Path, Store, str]:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "a1\n")
    write(ws, "z.txt", "z1\n")
    store = Store.open(ws)
    cp = store.checkpoint()
    write(ws, "a.txt", "a2\n")
    write(ws, "z.txt", "z2\n")
    return ws, store, cp.id


def _save(z: Path, data: bytes) -> None:
    """An editor's atomic save: a new file renamed over ``z``."""
    z.with_name("z.swp").write_bytes(data)
    os.replace(z.with_name("z.swp"), z)


def _around_the_swaps(monkeypatch: pytest.MonkeyPatch, z: Path,
                      between: Callable[[], int | None]) -> list[int]:
    """The user saves z.txt right before the rewind's swap of it; ``between`` runs right
    before the second swap (the put back), and may answer it with an errno instead."""
    real = exchange._raw
    calls: list[int] = []

    def raw(fd: int, a: bytes, b: bytes) -> int:
        if b == b"z.txt" and len(calls) < 2:
            calls.append(1)
            if len(calls) == 1:
                _save(z, SAVE)
            else:
                err = between()
                if err is not None:
                    return err
        return real(fd, a, b)

    monkeypatch.setattr(exchange, "_raw", raw)
    return calls


def _files(ws: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}


@pytest.mark.parametrize("err", (errno.EBUSY, errno.EIO, errno.EACCES))
def test_a_put_back_that_fails_keeps_the_save_and_undoes_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapping: None, err: int) -> None:
    """The second swap fails (a mount on the path, an I/O error, a folder made read-only):
    the save stayed at the temporary name, which the roll-back's clean-up removed as the
    op's own write, and z.txt kept the rewind's write. Now the save is given a saved name
    the error names, and z.txt is rolled back. Fails before the fix (the save deleted)."""
    ws, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    calls = _around_the_swaps(monkeypatch, z, lambda: err)
    try:
        with pytest.raises(rw.Unsafe, match=r"'z\.txt' changed .*turnback-saved-") as got:
            store.rewind(cp)
    finally:
        monkeypatch.undo()
        store.close()
    assert len(calls) == 2
    files = _files(ws)
    saved = [n for n in files if n.startswith("z.txt.turnback-saved-")]
    assert len(saved) == 1 and saved[0] in str(got.value)
    assert files == {"a.txt": b"a2\n", "z.txt": b"z2\n", saved[0]: SAVE}
    assert not second_names(ws)
    with Store.open(ws) as again:
        assert not journal_left(again.root) and again.journal_problem is None
    assert _files(ws) == files


def test_a_folder_put_at_the_path_between_the_swaps_keeps_a_name_the_scan_sees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapping: None) -> None:
    """Between the two swaps a build tool replaces the path by a folder: the second swap
    took it out at the temporary name, where saving it aside failed (``link`` refuses a
    folder: a bare ``PermissionError``), and it stayed there, a name every checkpoint
    leaves out and no clean-up removes. Now it is saved aside by a rename (which replaces
    no file) and the error says where. Fails before the fix."""
    ws, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"

    def folder() -> None:
        z.unlink()
        z.mkdir()
        (z / "inner.txt").write_bytes(b"built\n")

    _around_the_swaps(monkeypatch, z, folder)
    try:
        with pytest.raises(rw.Changed, match="turnback-saved-") as got:
            store.rewind(cp)
    finally:
        monkeypatch.undo()
        store.close()
    saved = [p for p in ws.iterdir() if p.name.startswith("z.txt.turnback-saved-")]
    assert len(saved) == 1 and str(saved[0]) == got.value.saved
    assert (saved[0] / "inner.txt").read_bytes() == b"built\n"
    assert z.read_bytes() == SAVE and (ws / "a.txt").read_bytes() == b"a2\n"
    assert not second_names(ws)


def test_a_second_save_between_the_swaps_is_named_for_what_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapping: None) -> None:
    """A second save renamed over the path between the two swaps comes out at the second
    and is saved aside, the first save back in place: both kept. The message said "the
    newest content is kept in place", the other way round. Fails before the fix."""
    ws, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"
    _around_the_swaps(monkeypatch, z, lambda: _save(z, b"z4, saved again\n"))
    try:
        with pytest.raises(rw.Changed) as got:
            store.rewind(cp)
    finally:
        monkeypatch.undo()
        store.close()
    assert got.value.saved is not None
    assert Path(got.value.saved).read_bytes() == b"z4, saved again\n" and z.read_bytes() == SAVE
    assert "newest content is kept in place" not in str(got.value)
    assert "what was saved there first is in place" in str(got.value)
    assert not second_names(ws)


KILLED = """
import os, sys
from turnback import Store
from turnback.fs import exchange
ws, cp = sys.argv[1], sys.argv[2]
z = os.path.join(ws, "z.txt")
real = exchange._raw
def raw(fd, a, b):
    if b == b"z.txt":  # the user's save, then the swap, then the kill before the look
        with open(z + ".swp", "wb") as f:
            f.write(sys.argv[3].encode())
        os.replace(z + ".swp", z)
        real(fd, a, b)
        os._exit(9)
    return real(fd, a, b)
exchange._raw = raw
Store.open(ws).rewind(cp)
"""


@pytest.mark.parametrize("alone", (True, False))
def test_a_kill_between_the_swap_and_its_look_keeps_the_save(
        tmp_path: Path, swapping: None, alone: bool) -> None:
    """SIGKILL right after the swap took the user's save out of z.txt: the save stood at a
    name of the op's writes, which the next open's clean-up removed (the save lost, and
    z.txt the rewind's write). Now recovery finds it (no part of a file the plan writes
    there) and puts it back over the rewind's write, or saves it aside
    (``.turnback-saved-<hex>``) where the folder has more paths of the plan, which of them
    it came out of unknown. Fails before the fix."""
    ws = tmp_path / "ws"
    names = ("z.txt",) if alone else ("y.txt", "z.txt")
    for n in names:
        write(ws, n, "1\n")
    with Store.open(ws) as store:
        cp = store.checkpoint().id
    for n in names:
        write(ws, n, "2\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", KILLED, str(ws), cp, SAVE.decode()], env=env)
    assert done.returncode == 9
    with Store.open(ws) as again:
        assert not journal_left(again.root) and again.journal_problem is None
    files = _files(ws)
    assert not second_names(ws)
    if alone:
        assert files == {"z.txt": SAVE}
    else:
        saved = [n for n in files if n.startswith(".turnback-saved-")]
        assert len(saved) == 1 and files[saved[0]] == SAVE
        assert files["z.txt"] == b"1\n" and files["y.txt"] == b"1\n" and len(files) == 3


CUT = """
import os, sys
import turnback.rewind.apply as rw
from turnback import Store
real = rw._write_all
def half(fd, data):
    if len(data) > 100:  # z.txt's write: cut in the middle by the kill
        real(fd, data[:len(data) // 2])
        os._exit(9)
    real(fd, data)
rw._write_all = half
Store.open(sys.argv[1]).rewind(sys.argv[2])
"""


def test_a_write_cut_short_by_a_kill_is_no_save_put_back(tmp_path: Path, swapping: None) -> None:
    """The other side of the test above: killed in the middle of z.txt's write, after
    y.txt's swap (its second name still there, y.txt holding the rewind's write): the
    half-written file is the start of z.txt's target, not a save, and recovery removes it
    as before; taken for a save it would have been put over y.txt."""
    ws = tmp_path / "ws"
    write(ws, "y.txt", "y1\n")
    write(ws, "z.txt", "z1\n" * 100)
    with Store.open(ws) as store:
        cp = store.checkpoint().id
    write(ws, "y.txt", "y2\n")
    write(ws, "z.txt", "z2\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CUT, str(ws), cp], env=env)
    assert done.returncode == 9
    with Store.open(ws) as again:
        assert not journal_left(again.root) and again.journal_problem is None
    assert _files(ws) == {"y.txt": b"y1\n", "z.txt": b"z1\n" * 100}
    assert not second_names(ws)


def test_a_put_back_refused_for_a_folder_names_where_the_save_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapping: None) -> None:
    """Between the two swaps the path becomes a folder, and the file system refuses to
    swap a file with a folder (``EINVAL``): the save is saved aside (the folder, newer,
    stays), but ``Changed`` said nothing was saved and named no file. Fails before the
    fix (``saved`` None, the save under a name no message gave)."""
    ws, store, cp = _prepared(tmp_path)
    z = ws / "z.txt"

    def folder() -> int:
        z.unlink()
        z.mkdir()
        (z / "inner.txt").write_bytes(b"built\n")
        return errno.EINVAL

    _around_the_swaps(monkeypatch, z, folder)
    try:
        with pytest.raises(rw.Changed) as got:
            store.rewind(cp)
    finally:
        monkeypatch.undo()
        store.close()
    assert got.value.saved is not None and Path(got.value.saved).read_bytes() == SAVE
    assert "newest content is kept in place" in str(got.value)
    assert (z / "inner.txt").read_bytes() == b"built\n"
    assert (ws / "a.txt").read_bytes() == b"a2\n" and not second_names(ws)
