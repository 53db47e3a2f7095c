"""Counting a rewind's (or a checkpoint's) system calls on the workspace by strace, for the
``*_syscalls.py`` scripts: one ``Store`` step run in a child between two marks written
to stderr (``MARK-START``, ``MARK-END``), the trace cut to what lies between them, and the
calls that touch the workspace's files counted. A count, not a time: the load does not
move it. ``warm_named_store``: the at-once checkpoint's starting point, for the scripts
run whole under strace (``trust29_counts.py``, ``redteam38_window.py``)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from turnback import Store

# the calls counted on the workspace: looks, links, renames, removals, opens
CALLS = "newfstatat,lstat,linkat,link,renameat,rename,renameat2,unlinkat,unlink,openat"
# a workspace file's name, a folder's, a temporary second name's (relative to a folder's
# descriptor, so the workspace's path is not in the line)
_OURS = re.compile(r'"(f\d+\.txt|d\d|\.turnback-tmp-[^"]*)"')


def traced_step(base: str, ws: str, step: str, store: str | None = None,
                strace_args: Sequence[str] = ()) -> list[str]:
    """The trace lines of ``step`` (Python, with ``s`` the workspace's open ``Store``; its
    store at ``store`` when named), run in a child under ``strace -f``; the trace is
    written in ``base``."""
    # imported here: a script run whole under ``strace -c`` (``trust29_counts.py``) imports
    # this module for ``warm_named_store``, and its counts are not to grow by subprocess's
    import subprocess

    code = (f"import os\nfrom pathlib import Path\nfrom turnback import Store\n"
            f"s = Store.open({ws!r}, store_dir={store!r} and Path({store!r}))\n"
            f"os.write(2, b'MARK-START')\n{step}\nos.write(2, b'MARK-END')\n"
            "s.close()\n")
    trace = os.path.join(base, "trace")
    subprocess.run(["strace", "-f", *strace_args, "-o", trace, sys.executable, "-c", code],
                   check=True, capture_output=True)
    with open(trace) as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines) if "MARK-START" in line)
    end = next(i for i, line in enumerate(lines) if "MARK-END" in line)
    return lines[start + 1:end]


def call_of(line: str) -> str:
    """The call's name in an ``strace -f`` line (after the process id)."""
    return line.split(None, 1)[-1].split("(")[0]


def on_workspace(line: str, ws: str) -> bool:
    """Whether the line is one of ``CALLS`` on a workspace file, by path or by name, and
    not on the store's own files."""
    ours = ws in line or _OURS.search(line)
    return call_of(line) in CALLS.split(",") and bool(ours) and "/.turnback/" not in line


@contextlib.contextmanager
def warm_named_store(where: Path, files: int, store_name: str,
                     label: str | None = None) -> Iterator[tuple[Path, Store]]:
    """A scratch workspace under ``where`` of ``files`` small files (``f<i>.txt``), its
    store named by ``--store`` (``store_dir``, ``store_name`` beside the workspace: the
    root each at-once checkpoint looks at), checkpointed once (``label``), its scan cache
    saved and its trees warm: what ``Store.checkpoint_now`` starts from. Yields the
    workspace and the open store; both removed after."""
    from turnback import Store

    with tempfile.TemporaryDirectory(dir=where) as d:
        ws = Path(d) / "ws"
        ws.mkdir()
        for i in range(files):
            (ws / f"f{i}.txt").write_text(f"file {i}\n")
        with Store.open(ws, store_dir=Path(d) / store_name) as store:
            store.checkpoint(label=label)
            store.save_scan_cache()
            store.warm_trees()
            yield ws, store
