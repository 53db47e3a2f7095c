"""How long ``fs/hardlinks`` trusts a device's answer (trust29's and tidy31's open item,
trust33).

The answer was kept a device for the process's life. A wrong one stood as long as a server
ran: a device number reused by a mount without links after a "links" made every put back's
refused ``link`` there raise (the late write left aside, the rewind failed) until a restart;
one reused by a mount with links after a "no" (or a "no" answered for a moment's reason)
skipped every second name (slower renames) and took a put back's refusal where links work
(EIO) for "no links", renamed past instead of raised. Now a "links" is asked again at the
next refused link (the one event that can show it wrong), and a "no" stands
``NO_LINKS_FOR`` seconds (a fake clock here), then the device is asked again.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback.fs import hardlinks, rewindnames
from turnback.fs.folders import FdFolder, open_root
from turnback.rewind import putback
from wsutil import makes_hard_links

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="folders reached by path make no links (a look, a rename)")


class _Disk:
    """The tests' disk made to make hard links or not (``FdFolder.link`` hooked), as a
    device number taken over by another mount would."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.links = True
        self.now = 1000.0
        real = FdFolder.link

        def link(folder: FdFolder, src: str, dst: str) -> None:
            if not self.links:
                raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP), dst)
            real(folder, src, dst)

        monkeypatch.setattr(FdFolder, "link", link)
        monkeypatch.setattr(hardlinks, "_clock", lambda: self.now)


def test_a_links_answer_is_asked_again_at_the_next_refused_link(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not makes_hard_links(ws):
        pytest.skip("no hard links on the tests' file system")
    disk = _Disk(monkeypatch)
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        assert hardlinks.makes_links(root) is True
        disk.links = False  # the device number is now a mount's without links
        (ws / "kept").write_bytes(b"the late write\n")
        # before: "links" kept, the refusal raised (EOPNOTSUPP), the late write left aside
        assert putback.put_back(root, "kept", "z.txt", None) is None
        assert hardlinks.known_without(os.fstat(root.fd).st_dev)
    assert (ws / "z.txt").read_bytes() == b"the late write\n" and not (ws / "kept").exists()
    assert sorted(n for n in os.listdir(ws) if n.startswith(rewindnames.PREFIX)) == []


def test_a_no_links_answer_stands_a_while_then_is_asked_again(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not makes_hard_links(ws):
        pytest.skip("no hard links on the tests' file system")
    disk = _Disk(monkeypatch)
    disk.links = False
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    dev = os.fstat(root.fd).st_dev
    with root:
        assert hardlinks.makes_links(root) is False
        disk.links = True  # remounted, or the device number now another mount's
        disk.now += hardlinks.NO_LINKS_FOR - 1
        assert hardlinks.known_without(dev)  # within the bound: kept, no call
        assert hardlinks.makes_links(root) is False
        disk.now += 2
        assert not hardlinks.known_without(dev)  # before: "no" for the process's life
        assert hardlinks.makes_links(root) is True
        assert not hardlinks.known_without(dev)
