"""One append to a session file ending in MB of two-byte junk lines (branch ``junk33``):
the head read's CPU and how many lines it parsed, with the Turnback on ``PYTHONPATH``.

    python bench/probes/sessions/junk_tail.py MB

Prints the append's CPU time, the parses (``fs/jsonl.loads`` calls) it made, what it did
(appended, or refused and why), and whether the file's bytes before it are intact. Scratch
data under ``$BENCHDATA`` (default the system's temporary folder), removed at the end.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from turnback import Store, TurnbackError
from turnback.fs import jsonl


def main(mb: int) -> None:
    d = Path(tempfile.mkdtemp(dir=os.environ.get("BENCHDATA")))
    try:
        ws = d / "ws"
        ws.mkdir()
        with Store.open(ws, store_dir=d / "st") as s:
            sid = s.start_session(title="t").id
            first = s.append(sid, "note", {"n": 0})
            path = s.root / "sessions" / f"{sid}.jsonl"
            with open(path, "ab") as f:
                for _ in range(mb):
                    f.write(b"z\n" * (1 << 19))
            before = path.read_bytes()
            calls = [0]
            real = jsonl.loads

            def counted(raw: bytes) -> Any:
                calls[0] += 1
                return real(raw)

            jsonl.loads = counted  # type: ignore[assignment]
            cpu = time.process_time()
            try:
                ev = s.append(sid, "note", {"n": 1})
                did = f"appended, parent is the last event: {ev.parent == first.id}"
            except TurnbackError as exc:
                did = f"refused ({type(exc).__name__}: {exc.message[:60]}...)"
            cpu = time.process_time() - cpu
            jsonl.loads = real  # type: ignore[assignment]
            intact = path.read_bytes()[: len(before)] == before
        print(f"{mb} MB of two-byte lines: append CPU {cpu:.3f} s, {calls[0]} lines parsed, "
              f"{did}; bytes before it intact: {intact}")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main(int(sys.argv[1]))
