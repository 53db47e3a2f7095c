"""The link probe's first file taken away between its ``open`` and its ``link`` is no
answer about the device (redteam44).

Since trust33 the probe's files are made in an open store's root, which every other
process's ``Store.open`` sweeps: one whose pid namespace is not the prober's (a container
sharing the store) sees the prober's pid as gone and moves its file aside, and anyone who
can write the store's root can rename it away. ``link`` then fails with ENOENT, which
``_probe`` took for "this file system makes no hard links": kept ``NO_LINKS_FOR`` seconds,
it skipped second names and took a put back's refused link where links work for "no
links". ENOENT says the name went, not what the file system is: no answer is kept.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from turnback.fs import hardlinks
from turnback.fs.folders import FdFolder, open_dir, open_root

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="folders reached by path make no links (a look, a rename)")


def test_a_probe_file_removed_before_its_link_is_no_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = FdFolder.link
    taken: list[str] = []

    def link(folder: FdFolder, src: str, dst: str) -> None:
        folder.unlink(src)  # another process's sweep (or a writer of the root) took it
        taken.append(src)
        real(folder, src, dst)

    monkeypatch.setattr(FdFolder, "link", link)
    monkeypatch.setattr(hardlinks, "_by_device", {})
    monkeypatch.setattr(hardlinks, "_asked", {})
    with open_root(str(tmp_path)) as root, open_dir(root, [], create=False) as dfd:
        assert isinstance(dfd, FdFolder)
        dev = os.fstat(dfd.fd).st_dev
        assert hardlinks.makes_links(dfd) is True  # the caller's refusal raised, as before
    assert taken, "the probe reached its link"
    assert not hardlinks.known_without(dev)  # no "no links" kept for the device
    assert dev not in hardlinks._by_device
    assert sorted(os.listdir(tmp_path)) == []  # nothing of the probe's left
