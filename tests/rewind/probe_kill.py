"""The link probe killed between its file's open and its ``link``, in a forked child, and
the probe files a folder holds: shared by the tests of where a killed probe's file is left
and who removes it (``test_probe_killed_leftover.py``, ``test_probe_in_store_root.py``)."""

from __future__ import annotations

import os
from pathlib import Path

from turnback.fs import hardlinks, rewindnames
from turnback.fs.folders import FdFolder, open_dir, open_root


def probe_killed_at_its_link(folder: Path) -> int:
    """Run the probe for ``folder`` in a forked child (the stores this process holds open
    are open in it too, as in a server) that dies at its ``link`` (``os._exit``, no
    clean-up of any kind): the child's pid, reaped."""
    pid = os.fork()
    if pid == 0:  # the child: nothing here returns
        try:
            hardlinks._by_device.clear()

            def link(self: FdFolder, src: str, dst: str) -> None:
                os._exit(0)  # killed between the probe file's open and its unlink

            FdFolder.link = link  # type: ignore[method-assign]
            with open_root(str(folder)) as root, open_dir(root, [], create=False) as dfd:
                assert isinstance(dfd, FdFolder)
                hardlinks.makes_links(dfd)
        finally:
            os._exit(3)  # the probe returned without linking: the test fails below
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return pid


def probes(folder: Path) -> list[str]:
    """The names in ``folder`` a probe (or any rewind temporary) was made under."""
    return sorted(n for n in os.listdir(folder) if n.startswith(rewindnames.PREFIX))
