"""A replaced file's second name (``Applier._keep_replaced``) where ``link`` is refused.

The second name only saves the rename the freeing of the replaced file's blocks: any refusal
means a plain rename, which replaces the file all the same. Before tidy31 a file system with
no hard links was tried with a ``link`` for every file replaced, each refused; now a refusal
asks the put back's question (``fs/hardlinks.makes_links``, once a device) and the files after
the first are not tried where the answer is "no links". The result is the same either way,
and where links work a refusal of one (EIO) is still a plain rename, not an error.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import rewindnames
from turnback.fs.folders import FdFolder
from wsutil import write

from .seams import skip_without_hard_links

pytestmark = pytest.mark.skipif(os.environ.get("TURNBACK_FS_PATHS") == "1",
                                reason="folders reached by path make no second names")

FILES = [f"f{i}.txt" for i in range(5)]


def _refuse_links(monkeypatch: pytest.MonkeyPatch, code: int,
                  probe_too: bool) -> list[tuple[str, str]]:
    """Every ``link`` refused with ``code`` (a file system with no hard links), or all but
    the probe's (links work, these ones refused); returns (kind, name) of each asked."""
    real = FdFolder.link
    asked: list[tuple[str, str]] = []

    def link(self: FdFolder, src: str, dst: str) -> None:
        parsed = rewindnames.parse(dst)
        probe = parsed is not None and rewindnames.is_probe(*parsed)
        asked.append(("probe" if probe else "second name", src))
        if probe_too or not probe:
            raise OSError(code, os.strerror(code), dst)
        real(self, src, dst)

    monkeypatch.setattr(FdFolder, "link", link)
    return asked


def _changed(ws: Path) -> tuple[Store, str]:
    for name in FILES:
        write(ws, name, f"{name} 1\n")
    store = Store.open(ws)
    cp = store.checkpoint().id
    for name in FILES:
        write(ws, name, f"{name} 2\n")
    return store, cp


def _rewound(ws: Path) -> None:
    for name in FILES:
        assert (ws / name).read_text() == f"{name} 1\n"
    assert [n for n in os.listdir(ws) if n.startswith(rewindnames.PREFIX)] == []


def test_no_links_there_the_files_after_the_first_are_not_tried(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No answer kept from another test (tests/conftest.py): this one's rewind asks."""
    store, cp = _changed(ws)
    asked = _refuse_links(monkeypatch, errno.EACCES, probe_too=True)
    with store:
        store.rewind(cp)
    _rewound(ws)
    tried = [src for kind, src in asked if kind == "second name"]
    assert len(tried) == 1 and tried[0] in FILES, asked  # one link a file before
    assert [kind for kind, _src in asked].count("probe") == 1  # asked once for the device


def test_one_link_refused_where_links_work_is_a_plain_rename(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard (so before too): EIO on a second name's link is no error of the rewind, and
    the next files are still tried, the file system making links."""
    skip_without_hard_links(ws)
    store, cp = _changed(ws)
    asked = _refuse_links(monkeypatch, errno.EIO, probe_too=False)
    with store:
        store.rewind(cp)
    _rewound(ws)
    assert sorted(src for kind, src in asked if kind == "second name") == FILES
