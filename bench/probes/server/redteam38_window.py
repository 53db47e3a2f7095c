"""Figures for branch redteam38 (bench/RESULTS.md, "A red-team pass over trust29").

``window DIR``: one at-once checkpoint (``Store.checkpoint_now``) of a ``--store`` store,
between two marks written to stderr; run it under ``strace -f -tt`` and read from the
root's look (``newfstatat`` of the store's path) to the ``openat`` of its
``checkpoints.jsonl``: the window in which a store replaced is written into by path.

``leftover DIR``: a child killed (``os._exit``) inside the hard-link probe, after its first
file; prints the names left, then again after two rewinds and a reopen.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from strace_counts import warm_named_store

from turnback import Store
from turnback.fs import hardlinks, rewindnames
from turnback.fs.folders import FdFolder, open_root


def window(where: Path) -> None:
    with warm_named_store(where, 200, "named-store", label="walk") as (ws, store):
        (ws / "f1.txt").write_bytes(os.urandom(256))
        os.write(2, b"MARK-BEGIN\n")
        assert store.checkpoint_now({"f1.txt"}) is not None
        os.write(2, b"MARK-END\n")


def _killed_in_probe(self: FdFolder, src: str, dst: str) -> None:
    os._exit(9)


def leftover(where: Path) -> None:
    with tempfile.TemporaryDirectory(dir=where) as d:
        ws = Path(d) / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("a1\n")
        with Store.open(ws, create=True) as store:
            cp = store.checkpoint().id
            (ws / "a.txt").write_text("a2\n")
            pid = os.fork()
            if pid == 0:
                FdFolder.link = _killed_in_probe  # type: ignore[method-assign]
                root = open_root(str(ws))
                assert isinstance(root, FdFolder)
                hardlinks.makes_links(root)
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            print("child exit", os.waitstatus_to_exitcode(status), "left:", _left(ws))
            store.rewind(cp)
            store.checkpoint()
        with Store.open(ws) as store:
            store.rewind(cp)
        print("after two rewinds and a reopen, left:", _left(ws))


def _left(ws: Path) -> list[str]:
    return sorted(n for n in os.listdir(ws) if n.startswith(rewindnames.PREFIX))


if __name__ == "__main__":
    {"window": window, "leftover": leftover}[sys.argv[1]](Path(sys.argv[2]))
