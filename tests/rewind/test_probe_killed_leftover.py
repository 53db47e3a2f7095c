"""The hard-link probe's empty file, left by a process killed between its open and its
unlink, is removed by the next recovery in its folder (redteam38's open item, trust30).

``fs/hardlinks._probe`` made its file under a rewind's temporary name of no op: the clean-up
(``Applier.remove_temps``) takes only the names of the op it recovers, so a kill at the
probe's ``link`` left an empty ``.turnback-tmp-<pid>-<hex>`` in the workspace for good (out
of every checkpoint, but git saw it). The probe's names now carry a check of their own
(``rewindnames.probe``); a clean-up removes such a name only where it is an empty file of
this user whose process is gone: a live process's probe, and a user's file with content,
are left.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from turnback import Store
from turnback.fs import rewindnames
from wsutil import dead_pid, journal_left, rewind_killed_before_release, write

from .probe_kill import probe_killed_at_its_link, probes

pytestmark = pytest.mark.skipif(
    os.environ.get("TURNBACK_FS_PATHS") == "1" or not hasattr(os, "fork"),
    reason="the probe asks folders held by descriptor; the kill needs fork")


def test_a_killed_probes_file_is_removed_by_the_next_recovery(ws: Path) -> None:
    rewind_killed_before_release(ws)
    killed = probe_killed_at_its_link(ws / "d")
    left = probes(ws / "d")
    ours = [n for n in left if (rewindnames.parse(n) or (0, ""))[0] == killed]
    assert len(ours) == 1 and (ws / "d" / ours[0]).stat().st_size == 0, left
    # a user's file of the same name shape (a dead pid's), with content: never removed
    users = rewindnames.probe(dead_pid(), "abcd")
    write(ws, f"d/{users}", "mine\n")
    # a live process's probe file (its pid, made after it started): left to it
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        theirs = rewindnames.probe(live.pid, "0123")
        write(ws, f"d/{theirs}", "")
        with Store.open(ws) as again:  # another process's open recovers the journal
            assert not journal_left(again.root)
        now = probes(ws / "d")
        assert ours[0] not in now, now
        assert theirs in now and (ws / "d" / users).read_text() == "mine\n"
    finally:
        assert live.stdin is not None
        live.stdin.close()
        live.wait()
