"""``fs/exchange.py``: two names swapped in one step, or word that there is no swap (the
caller renames then). The rewind's use of it: tests/rewind/test_swaps_at_each_seam.py."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnback.fs import exchange

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        yield fd, tmp_path
    finally:
        os.close(fd)


def _swaps_here(fd: int, where: Path) -> bool:
    (where / "p1").write_bytes(b"1")
    (where / "p2").write_bytes(b"2")
    try:
        return exchange.exchange(fd, str(where), "p1", "p2")
    finally:
        (where / "p1").unlink()
        (where / "p2").unlink()


def test_a_file_and_a_folder_trade_names(folder: tuple[int, Path]) -> None:
    fd, where = folder
    if not _swaps_here(fd, where):
        pytest.skip("no RENAME_EXCHANGE on this system or file system")
    (where / "a").write_bytes(b"file a\n")
    (where / "b").mkdir()
    (where / "b" / "inner").write_bytes(b"in b\n")
    ino_a = (where / "a").stat().st_ino
    assert exchange.exchange(fd, str(where), "a", "b") is True
    assert (where / "b").read_bytes() == b"file a\n" and (where / "b").stat().st_ino == ino_a
    assert (where / "a" / "inner").read_bytes() == b"in b\n"


def test_a_name_gone_is_an_error_naming_both(folder: tuple[int, Path]) -> None:
    fd, where = folder
    if not _swaps_here(fd, where):
        pytest.skip("no RENAME_EXCHANGE on this system or file system")
    (where / "a").write_bytes(b"a\n")
    with pytest.raises(FileNotFoundError) as got:
        exchange.exchange(fd, str(where), "a", "missing")
    assert got.value.filename == str(where / "a")
    assert got.value.filename2 == str(where / "missing")
    assert (where / "a").read_bytes() == b"a\n"


@pytest.mark.parametrize("err", (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP))
def test_no_swap_here_is_said_not_raised(folder: tuple[int, Path],
                                         monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """A file system that refuses the flag (``EINVAL``), a kernel without the call
    (``ENOSYS``): False, nothing moved, and the caller renames."""
    fd, where = folder
    monkeypatch.setattr(exchange, "_raw", lambda *_: err)
    (where / "a").write_bytes(b"a\n")
    (where / "b").write_bytes(b"b\n")
    assert exchange.exchange(fd, str(where), "a", "b") is False
    assert (where / "a").read_bytes() == b"a\n" and (where / "b").read_bytes() == b"b\n"


def test_a_checkpoint_never_imports_ctypes(tmp_path: Path) -> None:
    """``ctypes`` costs 3.9-5.2 ms to import: a checkpoint's process (the CLI's no-op hook)
    does not load it, nor look up the swap; a rewind that replaces a file by descriptor
    does, on its first swap (a rewind's ``syncfs`` imports ``ctypes`` too, after the
    release: ``fs/atomic.py``)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_bytes(b"a1\n")
    code = (
        "import sys\n"
        "from turnback import Store\n"
        "from turnback.fs import exchange\n"
        "s = Store.open(sys.argv[1]); cp = s.checkpoint(); s.checkpoint()\n"
        "print('ctypes' in sys.modules, bool(exchange._loaded))\n"
        "open(sys.argv[1] + '/a.txt', 'w').write('a2\\n')\n"
        "s.rewind(cp.id, finish_later=True)\n"
        "print(bool(exchange._loaded))\n"
        "s.finish_rewind(); s.close()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "ws")], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    swaps = sys.platform in ("linux", "darwin") and os.environ.get("TURNBACK_FS_PATHS") != "1"
    assert out == ["False", "False", str(swaps)]


def test_a_name_with_a_nul_is_refused_not_cut(folder: tuple[int, Path]) -> None:
    """ctypes passes ``b"b\\0c"`` as the C string ``"b"``: the swap took ``b``, a file the
    caller did not name (``os.rename`` raises ``ValueError``; redteam34). Fails before the
    fix (a and b swapped)."""
    fd, where = folder
    (where / "a").write_bytes(b"a\n")
    (where / "b").write_bytes(b"b\n")
    for pair in (("a", "b\0c"), ("b\0c", "a")):
        with pytest.raises(ValueError, match="null byte"):
            exchange.exchange(fd, str(where), *pair)
    assert (where / "a").read_bytes() == b"a\n" and (where / "b").read_bytes() == b"b\n"


def _no_replace_here(fd: int, where: Path) -> bool:
    (where / "p1").write_bytes(b"1")
    try:
        return exchange.rename_no_replace(fd, str(where), "p1", "p2")
    finally:
        for n in ("p1", "p2"):
            if (where / n).exists():
                (where / n).unlink()


@pytest.mark.parametrize("there", ("file", "dangling link", "folder"))
def test_a_rename_without_replacing_leaves_what_stands_there(
        folder: tuple[int, Path], there: str) -> None:
    """``rename_no_replace`` onto a name taken, even by a dangling link: ``FileExistsError``
    naming both, both left as they were (``os.rename`` replaces the file and the link)."""
    fd, where = folder
    if not _no_replace_here(fd, where):
        pytest.skip("no RENAME_NOREPLACE on this system or file system")
    (where / "a").write_bytes(b"a\n")
    b = where / "b"
    if there == "file":
        b.write_bytes(b"b\n")
    elif there == "dangling link":
        b.symlink_to(where / "nowhere")
    else:
        b.mkdir()
    with pytest.raises(FileExistsError) as got:
        exchange.rename_no_replace(fd, str(where), "a", "b")
    assert got.value.filename == str(where / "a") and got.value.filename2 == str(b)
    assert (where / "a").read_bytes() == b"a\n"
    assert {"file": lambda: b.read_bytes() == b"b\n", "dangling link": b.is_symlink,
            "folder": b.is_dir}[there]()


def test_a_rename_without_replacing_renames_to_a_free_name(folder: tuple[int, Path]) -> None:
    fd, where = folder
    if not _no_replace_here(fd, where):
        pytest.skip("no RENAME_NOREPLACE on this system or file system")
    (where / "a").write_bytes(b"a\n")
    ino = (where / "a").stat().st_ino
    assert exchange.rename_no_replace(fd, str(where), "a", "b") is True
    assert not (where / "a").exists() and (where / "b").stat().st_ino == ino


@pytest.mark.parametrize("err", (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP))
def test_no_rename_without_replacing_here_is_said_not_raised(
        folder: tuple[int, Path], monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """The flag refused (``EINVAL``) or no call (``ENOSYS``): False, nothing moved."""
    fd, where = folder
    monkeypatch.setattr(exchange, "_raw_excl", lambda *_: err)
    (where / "a").write_bytes(b"a\n")
    assert exchange.rename_no_replace(fd, str(where), "a", "b") is False
    assert (where / "a").read_bytes() == b"a\n" and not (where / "b").exists()


def test_a_name_with_a_nul_is_refused_by_the_rename_too(folder: tuple[int, Path]) -> None:
    fd, where = folder
    (where / "a").write_bytes(b"a\n")
    with pytest.raises(ValueError, match="null byte"):
        exchange.rename_no_replace(fd, str(where), "a", "b\0c")
    assert (where / "a").read_bytes() == b"a\n" and not (where / "b").exists()


def test_a_refused_rename_is_told_from_a_filtered_call(
        folder: tuple[int, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """``EPERM`` for this rename only (a sticky folder, an immutable file: the call with no
    names answers ``ENOENT``) is raised as before; ``EPERM`` for every call (a seccomp
    filter) is "no such rename here", and the call is not asked again (redteam36)."""
    fd, where = folder
    (where / "a").write_bytes(b"a\n")
    asked: list[int] = []

    def refused(dir_fd: int, a: bytes, b: bytes, flag: int) -> int:
        asked.append(flag)
        return errno.EPERM if a else errno.ENOENT

    monkeypatch.setattr(exchange, "_loaded", [refused])
    with pytest.raises(PermissionError):
        exchange.rename_no_replace(fd, str(where), "a", "b")
    assert exchange._loaded == [refused]

    def filtered(dir_fd: int, a: bytes, b: bytes, flag: int) -> int:
        asked.append(flag)
        return errno.EPERM

    monkeypatch.setattr(exchange, "_loaded", [filtered])
    asked.clear()
    assert exchange.rename_no_replace(fd, str(where), "a", "b") is False
    assert exchange.exchange(fd, str(where), "a", "b") is False
    assert len(asked) == 2 and exchange._loaded == [None]
    assert (where / "a").read_bytes() == b"a\n" and not (where / "b").exists()


def test_the_look_for_a_filter_is_not_refused_by_an_unfiltered_kernel(
        folder: tuple[int, Path]) -> None:
    """The real call with no names: ``ENOENT`` from a kernel that runs it, so a genuine
    ``EPERM`` is never taken for a filter here."""
    fd, _ = folder
    call = exchange._load()
    if call is None:
        pytest.skip("no rename call taking flags in this C library")
    assert exchange._filtered(call, fd) is False
