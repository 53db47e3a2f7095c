"""The compiled check of one folder (``snapshot/_folderparts.c``) against the Python path
it stands in for (``prescan.python_parts``): the same digest input bytes, the same
folders and ignore-file answer, the same "not verified" on whatever the disk holds. The
records in every stat cache were made by the Python path (``prescan.listing_key``), so
the C bytes must digest to them exactly. Skipped where the module was not built (no
compiler at install, or not Linux): Python's path is then the only one."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnback import Store
from turnback.fs.osflags import DESCRIPTORS
from turnback.snapshot import prescan
from turnback.snapshot import scan as scan_mod
from wsutil import age, age_tree, plain_scan, write

compiled = pytest.importorskip("turnback.snapshot._folderparts",
                               reason="the compiled check was not built here")
folder_parts: Callable[[int], prescan.Parts | None] = compiled.folder_parts

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@contextmanager
def opened(path: Path | bytes) -> Iterator[int]:
    fd = os.open(path, _DIR)
    try:
        yield fd
    finally:
        os.close(fd)


def both(path: Path | bytes) -> tuple[prescan.Parts | None, prescan.Parts | None]:
    with opened(path) as fd:
        return folder_parts(fd), prescan.python_parts(fd)


def walk_record(path: Path | bytes) -> str:
    """The record the walk would write for this folder (``scan.py``: ``listing_key``)."""
    with opened(path) as fd, os.scandir(fd) as it:
        listing = list(it)
        sts = [de.stat(follow_symlinks=False) for de in listing]
    return prescan.listing_key(listing, sts)


def test_the_install_uses_the_compiled_check_where_it_was_built() -> None:
    # a fallback taken silently would only show as a slower no-op
    assert sys.getfilesystemencoding() == "utf-8"
    assert prescan.folder_parts is folder_parts


# any name a folder may hold: bytes but "/" and NUL, up to 255, not "." nor ".."
_NAMES = st.binary(min_size=1, max_size=255).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))
_KINDS = st.sampled_from(["file", "empty", "exec", "folder", "link", "fifo"])


def _make(folder: bytes, name: bytes, kind: str) -> None:
    path = os.path.join(folder, name)
    if kind == "folder":
        os.mkdir(path)
    elif kind == "link":
        os.symlink(b"../" + name, path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        with open(path, "wb") as f:
            f.write(b"" if kind == "empty" else name)
        if kind == "exec":
            os.chmod(path, 0o755)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.dictionaries(_NAMES, _KINDS, max_size=40),
       ignore=st.sampled_from([None, ".gitignore", ".turnbackignore"]))
def test_c_and_python_give_the_same_bytes_on_any_folder(
        tmp_path: Path, entries: dict[bytes, str], ignore: str | None) -> None:
    folder = os.fsencode(tmp_path / "f")
    os.mkdir(folder)
    try:
        for name, kind in entries.items():
            _make(folder, name, kind)
        if ignore is not None and ignore.encode() not in entries:
            _make(folder, ignore.encode(), "file")
        got, want = both(folder)
        assert want is not None
        assert got == want
        _data, count, dirs, has_ignore = got
        assert count == len(os.listdir(folder))
        assert sorted(dirs) == sorted(os.fsdecode(n) for n, k in entries.items()
                                      if k == "folder")
        assert has_ignore == (ignore is not None
                              or b".gitignore" in entries or b".turnbackignore" in entries)
        # and the walk's record of it verifies it, with what the walk's own check says
        record = walk_record(folder)
        with opened(folder) as fd, os.scandir(fd) as it:
            listing = list(it)
            sts = [de.stat(follow_symlinks=False) for de in listing]
        assert prescan.parts_matching(got, record) == prescan.matching(listing, sts, record)
        assert prescan.parts_matching(got, record) is not None or count == 0
    finally:
        shutil.rmtree(folder)


def test_odd_names_a_folder_named_like_an_ignore_file_and_the_longest_name(
        tmp_path: Path) -> None:
    names = [b"\xff\xfe", b"a\nb", b"\xed\xa0\x80", b"x" * 255, "é".encode(), b" ", b"\\"]
    for n in names:
        _make(os.fsencode(tmp_path), n, "file")
    os.mkdir(tmp_path / ".gitignore")  # a folder: still "an ignore file is there", as Python
    got, want = both(tmp_path)
    assert got == want
    assert got is not None and got[2] == [".gitignore"] and got[3] is True
    assert prescan.parts_matching(got, walk_record(tmp_path)) == (len(names), [".gitignore"],
                                                                   True)


def test_an_empty_folder_is_never_verified(tmp_path: Path) -> None:
    got, want = both(tmp_path)
    assert got == want == (b"", 0, [], False)
    assert prescan.parts_matching(got, walk_record(tmp_path)) is None


def test_a_huge_folder(tmp_path: Path) -> None:
    for i in range(100_000):
        os.close(os.open(tmp_path / f"file-with-a-longish-name-{i:06}", os.O_CREAT | os.O_WRONLY))
    got, want = both(tmp_path)
    assert got is not None and got == want
    assert got[1] == 100_000 and len(got[0]) == len(b"\0".join(
        os.fsencode(n) for n in os.listdir(tmp_path))) + 100_000 * 36
    assert prescan.parts_matching(got, walk_record(tmp_path)) == (100_000, [], False)


def test_not_a_folder_nor_an_open_descriptor_is_not_verified(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        assert folder_parts(fd) is None and prescan.python_parts(fd) is None
    finally:
        os.close(fd)
    assert folder_parts(fd) is None and prescan.python_parts(fd) is None  # closed now


_AT_THE_LIMIT = """
import os, resource, sys
from turnback.snapshot._folderparts import folder_parts
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
got = folder_parts(fd)
again = folder_parts(fd)
print(got is not None and got[1] == 3 and got == again)
"""


def test_a_folder_is_listed_through_its_own_descriptor(tmp_path: Path) -> None:
    """No descriptor of its own (no duplicate for ``fdopendir``, cold25): at the process's
    descriptor limit the folder is still checked, and rewound after for a second listing.
    Before, the duplicate failed there and the folder was "not verified"."""
    for name in ("a", "b", "c"):
        write(tmp_path / name, name)
    import subprocess

    out = subprocess.run([sys.executable, "-c", _AT_THE_LIMIT, str(tmp_path)], check=True,
                         capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))).stdout
    assert out.strip() == "True"


def test_an_entry_that_cannot_be_stated_is_not_verified(tmp_path: Path) -> None:
    """Listable but not searchable (read without execute permission): every ``fstatat``
    fails, the path an entry gone between the listing and its ``lstat`` takes too. Run
    in a child as another user where this is root (root's stats ignore modes)."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x")
    os.chmod(tmp_path / "d", 0o444)
    try:
        with opened(tmp_path / "d") as fd:
            if os.geteuid() != 0:
                assert folder_parts(fd) is None and prescan.python_parts(fd) is None
                return
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                try:
                    os.setgid(65534)
                    os.setuid(65534)
                    ok = folder_parts(fd) is None and prescan.python_parts(fd) is None
                    os.write(w, b"1" if ok else b"0")
                finally:
                    os._exit(0)
            os.close(w)
            answer = os.read(r, 1)
            os.close(r)
            os.waitpid(pid, 0)
            assert answer == b"1"
    finally:
        os.chmod(tmp_path / "d", 0o755)


def test_a_time_past_2262_is_not_verified(tmp_path: Path) -> None:
    """Past what the part's signed 64-bit nanoseconds hold: Python's pack raises, C says
    so; neither verifies the folder (no record could have been made of it)."""
    (tmp_path / "f").write_bytes(b"x")
    try:
        os.utime(tmp_path / "f", ns=(0, 10_000_000_000 * 10**9))
    except OSError:
        pytest.skip("this file system holds no such time")
    assert both(tmp_path) == (None, None)


def test_a_time_in_1677_s_last_second_before_the_limit_is_verified_as_in_python() -> None:
    """A time between -2**63 ns and the second before it (1677-09-21 00:12:43-44): its
    seconds times 10**9 overflow 64 bits, its nanoseconds added bring it back; Python
    packs it, so C must not refuse it (it did: such a folder listed again at every
    checkpoint, its record never checked in C). tmpfs holds such a time; ext4 clamps to
    1901, then skipped."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no tmpfs at /dev/shm")
    with tempfile.TemporaryDirectory(dir=shm) as held:
        folder = Path(held)
        (folder / "f").write_bytes(b"x")
        when = -9223372036_500_000_000  # seconds -9223372037, nanoseconds 500,000,000
        os.utime(folder / "f", ns=(when, when))
        if os.lstat(folder / "f").st_mtime_ns != when:
            pytest.skip("this file system holds no such time")
        c, py = both(folder)
        assert py is not None
        assert c == py


def test_a_file_replaced_during_the_check_is_not_verified(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"one")
    (tmp_path / "b").write_bytes(b"two")
    record = walk_record(tmp_path)
    with opened(tmp_path) as fd:
        assert prescan.parts_matching(folder_parts(fd), record) == (2, [], False)
        (tmp_path / "a.new").write_bytes(b"one")
        os.replace(tmp_path / "a.new", tmp_path / "a")  # same size and name, a new inode
        assert prescan.parts_matching(folder_parts(fd), record) is None
        assert folder_parts(fd) == prescan.python_parts(fd)


def test_a_folder_swapped_for_a_link_keeps_the_descriptor_s_folder(tmp_path: Path) -> None:
    """The descriptor was opened without following a link (``verify_one``): what it lists
    stays the folder it opened, on both paths, whatever now has its name."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "g").write_bytes(b"y")
    with opened(tmp_path / "d") as fd:
        before = folder_parts(fd)
        os.rename(tmp_path / "d", tmp_path / "moved")
        os.symlink("other", tmp_path / "d")
        assert folder_parts(fd) == prescan.python_parts(fd) == before
    root = os.open(tmp_path, _DIR)
    try:  # and a check by name refuses the link
        assert prescan.verify_one(root, "d", walk_record(tmp_path / "other")) is None
    finally:
        os.close(root)


def test_entries_coming_and_going_never_break_the_check(tmp_path: Path) -> None:
    """Names created and removed while the folder is listed and stat-ed (the GIL is let go
    meanwhile): each answer is None or a folder as it was at some moment, digest input
    and count agreeing; never a crash. Stops once both kinds of answer were seen."""
    for i in range(200):
        (tmp_path / f"keep{i}").write_bytes(b"k")
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            p = tmp_path / f"churn{i % 50}"
            p.write_bytes(b"c")
            p.unlink()
            i += 1

    t = threading.Thread(target=churn)
    t.start()
    seen_none = seen_some = 0
    try:
        with opened(tmp_path) as fd:
            for _ in range(20_000):
                got = folder_parts(fd)
                if got is None:
                    seen_none += 1
                else:
                    data, count, dirs, _ign = got
                    names_len = len(data) - 36 * count
                    assert dirs == [] and count >= 200
                    assert data[:names_len].count(b"\0") == count - 1
                    seen_some += 1
                if seen_none and seen_some > 10:
                    break
    finally:
        stop.set()
        t.join()
    assert seen_some


def test_reference_counts_of_what_it_returns(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "f").write_bytes(b"x")
    with opened(tmp_path) as fd:
        got = folder_parts(fd)
        same = prescan.python_parts(fd)  # Python's own objects, held the same ways here
        assert got is not None and same is not None
        data, _count, dirs, _ign = got
        pdata, _pcount, pdirs, _pign = same
        assert sys.getrefcount(got) == sys.getrefcount(same)
        assert sys.getrefcount(data) == sys.getrefcount(pdata)
        assert sys.getrefcount(dirs) == sys.getrefcount(pdirs)
        assert sys.getrefcount(dirs[0]) == sys.getrefcount(pdirs[0])
        for _ in range(1000):  # reference errors in a loop show as a crash under -X dev
            folder_parts(fd)


def test_verify_one_answers_alike_on_both_paths(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d").mkdir()
    for i in range(5):
        (tmp_path / "d" / f"f{i}").write_bytes(b"x" * i)
    (tmp_path / "d" / "sub").mkdir()
    (tmp_path / "d" / ".turnbackignore").write_bytes(b"*.log\n")
    os.chmod(tmp_path / "d" / "f1", stat.S_IRWXU)
    record = walk_record(tmp_path / "d")
    root = os.open(tmp_path, _DIR)
    try:
        answers = []
        for impl in (folder_parts, prescan.python_parts):
            monkeypatch.setattr(prescan, "folder_parts", impl)
            answers.append(prescan.verify_one(root, "d", record))
            answers.append(prescan.verify_one(root, "d", "0" * 32))
    finally:
        os.close(root)
    assert answers == [(6, ["sub"], True), None] * 2


# -- the walk's own compiled check (``Scanner._compiled_check``) -----------------------------
def _walk_lists(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders a walk lists in Python (those the compiled check did not take)."""
    listed: list[str] = []
    real = scan_mod.Scanner._open_listing

    def open_listing(abs_dir: str, rel_dir: str, skipped: list[dict[str, object]]) -> Any:
        listed.append(rel_dir)
        return real(abs_dir, rel_dir, skipped)

    monkeypatch.setattr(scan_mod.Scanner, "_open_listing", staticmethod(open_listing))
    return listed


def _recorded(ws: Path) -> None:
    for d in ("", "a", "a/b", "c"):
        for i in range(3):
            write(ws, f"{d}/f{i}" if d else f"f{i}", f"{d} {i}")
    write(ws, "c/.gitignore", "")
    age_tree(ws)
    with Store.open(ws) as s:
        s.checkpoint()
        s.checkpoint()  # every folder recorded


def test_a_walk_takes_unchanged_folders_from_the_compiled_check(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _recorded(ws)
    age(write(ws, "a/f1", "changed"))
    listed = _walk_lists(monkeypatch)
    with Store.open(ws) as s:  # no fork: the walk alone checks every record
        cp = s.checkpoint()
    walked = list(listed)  # (the plain scan below lists every folder)
    assert cp.tree == plain_scan(ws).tree
    if DESCRIPTORS:
        assert walked == ["a"], "only the changed folder listed in Python"
    else:  # folders reached by path (TURNBACK_FS_PATHS=1): the compiled check is not used
        assert sorted(walked) == ["", "a", "a/b", "c"]


def test_a_folder_whose_ignore_rules_changed_is_listed_though_its_record_holds(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record says nothing of the rules above a folder: the compiled check may verify
    ``a/b`` while the rules that now ignore its files changed in ``a``."""
    _recorded(ws)
    age(write(ws, "a/.gitignore", "f0\n"))
    listed = _walk_lists(monkeypatch)
    with Store.open(ws) as s:
        before = s.resolve_checkpoint("latest", "from").id
        cp = s.checkpoint()
        tree = cp.tree
        paths = {c.path for c in s.changes(before, cp.id)}
    walked = list(listed)
    assert tree == plain_scan(ws).tree
    assert {"a/f0", "a/b/f0"} <= paths
    assert sorted(walked) == (["a", "a/b"] if DESCRIPTORS else ["", "a", "a/b", "c"])
