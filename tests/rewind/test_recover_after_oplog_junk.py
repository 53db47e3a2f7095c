"""A rewind killed before its record, in a store whose ``oplog.jsonl`` ends in more than
``HEAD_REACH`` junk lines (planted: anyone who can write ``.turnback/``; branch redteam42).

The next open finishes the rewind (``recover``), first asking whether the op log holds it
already: its last line, then the whole file. Since junk33 the look at the last line refused
past the bound (``NoLastObject``), out of ``recover``, so ``Store.open`` failed: the CLI, fsck
and the server could not open the store at all while the journal was pending. The look at
the whole file, made next anyway, answers the question; the open now goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from turnback import Store
from turnback.fs.jsonl import HEAD_REACH

KILLED_AFTER_THE_FILES = """
import os, sys
from turnback import Store
store = Store.open(sys.argv[1])
store.rewind(sys.argv[2], finish_later=True)  # the files in place, the record not yet
os._exit(0)  # as a kill would: no close, no finish
"""


def test_an_open_after_a_killed_rewind_and_oplog_junk_finishes_it(ws: Path) -> None:
    (ws / "a.txt").write_text("one")
    with Store.open(ws) as st:
        first = st.checkpoint(label="first")
        (ws / "a.txt").write_text("two")
        st.checkpoint(label="second")
        oplog = st.root / "oplog.jsonl"
    subprocess.run([sys.executable, "-c", KILLED_AFTER_THE_FILES, str(ws), first.id],
                   check=True, env=os.environ.copy())
    assert (ws / "a.txt").read_text() == "one"
    with open(oplog, "ab") as f:
        f.write(b"x\n" * (HEAD_REACH + 1))
    with Store.open(ws) as again:  # before: NoLastObject naming oplog.jsonl, from the open
        assert again.journal_problem is None
        records = [op for op in again.oplog.all() if op.get("op") == "rewind"]
        assert [op.get("checkpoint") for op in records] == [first.id]
    assert (ws / "a.txt").read_text() == "one"
