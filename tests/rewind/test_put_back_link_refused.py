"""A put back's ``link`` refused: the file system asked whether it makes links (trust29).

``putback._move_no_replace`` moves a file by ``link`` then ``unlink`` (replacing nothing).
Where ``link`` was refused it renamed instead only for the errnos of a list (EPERM, EROFS,
ENOSYS, EOPNOTSUPP): a file system with no hard links that answers another (EACCES here)
failed the put back, the late write left at its temporary name. Now the file system itself
is asked (``fs/hardlinks.makes_links``, once a device): no links there, the file is renamed
replacing nothing; links there, the refusal of this one (EIO) is raised as before.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback.fs import hardlinks, rewindnames
from turnback.fs.folders import FdFolder, open_root
from turnback.rewind import putback

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="folders reached by path make no links (a look, a rename)")


def _refuse_links(monkeypatch: pytest.MonkeyPatch, code: int, probe_too: bool) -> list[str]:
    """Every ``link`` refused with ``code`` (a file system with no hard links), or only
    those not of the probe's own names (one link refused where links work)."""
    real = FdFolder.link
    asked: list[str] = []

    def link(self: FdFolder, src: str, dst: str) -> None:
        asked.append(dst)
        if probe_too or not rewindnames.is_marked(dst):
            raise OSError(code, os.strerror(code), dst)
        real(self, src, dst)

    monkeypatch.setattr(FdFolder, "link", link)
    return asked


def _left(ws: Path) -> list[str]:
    return sorted(n for n in os.listdir(ws) if n.startswith(rewindnames.PREFIX))


def test_a_file_system_with_no_links_answering_its_own_errno_is_renamed_into(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "kept").write_bytes(b"the late write\n")
    (ws / "z.txt").write_bytes(b"the user's newest\n")
    asked = _refuse_links(monkeypatch, errno.EACCES, probe_too=True)
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        saved = putback.save_aside(root, "kept", "z.txt")  # EACCES raised before
        assert putback.put_back(root, saved, "moved.txt", None) is None
    assert saved.startswith("z.txt.turnback-saved-")
    assert (ws / "moved.txt").read_bytes() == b"the late write\n"
    assert (ws / "z.txt").read_bytes() == b"the user's newest\n"
    assert not (ws / "kept").exists() and not (ws / saved).exists()
    assert _left(ws) == []  # the probe's own names unlinked
    assert sum(rewindnames.is_marked(d) for d in asked) == 1  # asked once for the device


def test_one_link_refused_where_links_work_is_raised(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard (raised before too): EIO on this link is no word on the file system."""
    if not _makes_links(ws):
        pytest.skip("no hard links on this file system: the probe says so, rightly")
    (ws / "kept").write_bytes(b"the late write\n")
    _refuse_links(monkeypatch, errno.EIO, probe_too=False)
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root, pytest.raises(OSError) as got:
        putback.put_back(root, "kept", "z.txt", None)
    assert got.value.errno == errno.EIO
    assert (ws / "kept").read_bytes() == b"the late write\n" and not (ws / "z.txt").exists()
    assert _left(ws) == []


def test_a_file_the_process_may_not_link_is_renamed_into_replacing_nothing(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EPERM where links work: Linux's ``fs.protected_hardlinks`` refuses to link a file
    another user owns that this one cannot read and write (a root-owned file a container
    left in the workspace), while the probe's own file links. trust29 raised it, the late
    write left at its temporary name; trust28's list renamed it. Renamed again, replacing
    nothing (the hook stands in for the owner: root is never refused)."""
    if not _makes_links(ws):
        pytest.skip("no hard links on this file system: the probe already says rename")
    (ws / "kept").write_bytes(b"the late write\n")
    (ws / "z.txt").write_bytes(b"the user's newest\n")
    _refuse_links(monkeypatch, errno.EPERM, probe_too=False)
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        assert putback.put_back(root, "kept", "moved.txt", None) is None
        with pytest.raises(FileExistsError):  # and still replaces nothing
            putback._move_no_replace(root, "moved.txt", "z.txt")
    assert (ws / "moved.txt").read_bytes() == b"the late write\n"
    assert (ws / "z.txt").read_bytes() == b"the user's newest\n"
    assert not (ws / "kept").exists()
    assert _left(ws) == []


def test_the_real_file_system_is_moved_into_replacing_nothing(ws: Path) -> None:
    """No hook: on the case-folding FUSE mount (TURNBACK_TEST_FS=casefold, EROFS to any
    link) as on a local disk, the move replaces nothing and leaves no name behind."""
    (ws / "kept").write_bytes(b"the late write\n")
    (ws / "z.txt").write_bytes(b"the user's newest\n")
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        saved = putback.save_aside(root, "kept", "z.txt")
        again = putback.put_back(root, saved, "z.txt", None)  # the newest stands: aside
    assert again is not None and again != saved and not (ws / saved).exists()
    assert (ws / again).read_bytes() == b"the late write\n"
    assert (ws / "z.txt").read_bytes() == b"the user's newest\n"
    assert _left(ws) == []


def _makes_links(ws: Path) -> bool:
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        return hardlinks.makes_links(root)


def test_a_folder_that_takes_no_probe_file_is_asked_again_later(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's own file refused (a read-only folder): the caller's refusal is raised,
    and no answer is kept for the device: another folder of it may take the probe."""
    real_open = FdFolder.open
    refused: list[str] = []

    def no_new_file(self: FdFolder, name: str, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT and rewindnames.is_marked(name) and not refused:
            refused.append(name)
            raise PermissionError(errno.EACCES, "read-only folder", name)
        return real_open(self, name, flags, mode)

    monkeypatch.setattr(FdFolder, "open", no_new_file)
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        assert hardlinks.makes_links(root) is True  # cannot tell: the refusal stands
        assert refused and hardlinks._by_device == {}
        hardlinks.makes_links(root)  # asked again, answered this time
        assert len(hardlinks._by_device) == 1
    assert _left(ws) == []
