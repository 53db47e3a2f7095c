"""The hard-link probe's own link failing for a reason that is no word on the file system
(redteam38's pass over trust29).

``fs/hardlinks.makes_links`` links an empty file of its own once a device and keeps the
answer for the process's life. Any refusal of that link was kept as "no hard links": an
``EIO`` (a bad sector under the folder), ``ENOSPC``/``EDQUOT`` (the folder's block full) or
``EEXIST`` (its second name taken) on the probe made every later refused link on that
device a rename, for as long as the language server ran: ``EIO`` on one put back's link,
which trust29 raises where links work, was then renamed past. Now such an errno keeps no
answer (the caller's refusal stands, the device is asked again next time).
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


@pytest.mark.parametrize("code", [errno.EIO, errno.ENOSPC, errno.EDQUOT, errno.EEXIST])
def test_a_probe_link_failing_once_keeps_no_answer(
        ws: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    if not makes_hard_links(ws):
        pytest.skip("no hard links on this file system: the probe's 'no' is right there")
    real = FdFolder.link
    failed: list[str] = []

    def link(self: FdFolder, src: str, dst: str) -> None:
        if rewindnames.is_marked(dst) and not failed:  # the probe's link, once
            failed.append(dst)
            raise OSError(code, os.strerror(code), dst)
        if not rewindnames.is_marked(dst):  # the put back's own link: EIO, links working
            raise OSError(errno.EIO, os.strerror(errno.EIO), dst)
        real(self, src, dst)

    monkeypatch.setattr(FdFolder, "link", link)
    (ws / "kept").write_bytes(b"the late write\n")
    root = open_root(str(ws))
    assert isinstance(root, FdFolder)
    with root:
        for _ in range(2):  # the first while the probe fails, the second after
            with pytest.raises(OSError) as got:  # renamed past before, from the first on
                putback.put_back(root, "kept", "z.txt", None)
            assert got.value.errno == errno.EIO
        assert failed
        assert list(hardlinks._by_device.values()) == [True]  # asked again, answered
    assert (ws / "kept").read_bytes() == b"the late write\n" and not (ws / "z.txt").exists()
    assert sorted(n for n in os.listdir(ws) if n.startswith(rewindnames.PREFIX)) == []
