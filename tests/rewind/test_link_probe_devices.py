"""The hard-link probe's answer is the file system's of the folder asked, not of a path
(redteam38's pass over trust29: probed sound).

``fs/hardlinks.makes_links`` keeps one answer a device, read from the descriptor of the
folder asked (``fstat``), not from its path: a folder of the workspace that is another file
system (a mount placed under it, tmpfs here) is asked on its own, whatever the workspace's
answer was; a folder swapped for a link to one is never opened through the link.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from turnback.fs import hardlinks
from turnback.fs.folders import FdFolder, open_root

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="folders reached by path make no links (a look, a rename)")


def test_a_folder_on_another_file_system_is_asked_on_its_own(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(ws).st_dev:
        pytest.skip("no /dev/shm on a file system other than the workspace's")
    no_links = os.stat(ws).st_dev
    real = FdFolder.link

    def link(self: FdFolder, src: str, dst: str) -> None:
        if os.fstat(self.fd).st_dev == no_links:  # the workspace's: no hard links
            raise OSError(errno.EPERM, os.strerror(errno.EPERM), dst)
        real(self, src, dst)

    monkeypatch.setattr(FdFolder, "link", link)
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        for first, second in ((str(ws), other), (other, str(ws))):
            monkeypatch.setattr(hardlinks, "_by_device", {})
            for where in (first, second):
                root = open_root(where)
                assert isinstance(root, FdFolder)
                with root:
                    assert hardlinks.makes_links(root) is (where == other), where
        assert os.listdir(other) == []
    assert len(hardlinks._by_device) == 2
