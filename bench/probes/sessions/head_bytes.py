"""One append to a session file ending in 1,024 junk lines of 1 MB each, or one long junk
line (branch ``junk35``): the head read's CPU and bytes read, with the Turnback on
``PYTHONPATH``.

    python bench/probes/sessions/head_bytes.py SHAPE

SHAPE: ``arrays`` (1,024 lines ``[0,0,...]`` of 1 MiB: JSON, no object), ``objects`` (1,024
lines ``{"a":[0,...]}`` of 1 MiB: objects, no event) or ``one-line`` (one 128 MiB ``[0,...]``
line). Prints the append's CPU time, the bytes ``os.pread`` returned to ``fs/jsonl`` and the
parses it made, and what it did (appended, or refused). Scratch data under ``$BENCHDATA``
(default the system's temporary folder), removed at the end.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from turnback import Kind, Store, TurnbackError
from turnback.fs import jsonl

MIB = 1 << 20


def _junk(shape: str) -> list[bytes]:
    if shape == "arrays":
        return [b"[" + b"0," * (MIB // 2 - 1) + b"0]\n"] * 1024
    if shape == "objects":
        return [b'{"a":[' + b"0," * (MIB // 2 - 5) + b"0]}\n"] * 1024
    return [b"[" + b"0," * (64 * MIB - 1) + b"0]\n"]


def main(shape: str) -> None:
    d = Path(tempfile.mkdtemp(dir=os.environ.get("BENCHDATA")))
    try:
        ws = d / "ws"
        ws.mkdir()
        with Store.open(ws, store_dir=d / "st") as s:
            s.start_session(session_id="s-1")
            s.append("s-1", Kind.PROMPT, {"text": "hi"})
            path = s.root / "sessions" / "s-1.jsonl"
            with open(path, "ab") as f:
                for line in _junk(shape):
                    f.write(line)
            read, parses = [0], [0]
            real_pread, real_loads = os.pread, jsonl.loads

            def pread(fd: int, n: int, offset: int) -> bytes:
                data = real_pread(fd, n, offset)
                read[0] += len(data)
                return data

            def loads(raw: bytes) -> Any:
                parses[0] += 1
                return real_loads(raw)

            jsonl.os.pread, jsonl.loads = pread, loads  # type: ignore[assignment]
            try:
                t0 = time.process_time()
                try:
                    s.append("s-1", Kind.NOTE, {"text": "after"})
                    what = "appended"
                except TurnbackError as exc:
                    what = f"refused: {type(exc).__name__}"
                cpu = time.process_time() - t0
            finally:
                jsonl.os.pread, jsonl.loads = real_pread, real_loads  # type: ignore[assignment]
            print(f"{shape}: file {path.stat().st_size / MIB:.0f} MiB, append CPU {cpu:.3f} s, "
                  f"read {read[0] / MIB:.1f} MiB, {parses[0]} parses, {what}")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main(sys.argv[1])
