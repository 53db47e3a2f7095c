"""Large transcripts: memory stays bounded, time grows with the input. Prints the figures.

``pytest tests/importers/test_scale.py -m slow -s`` also imports a 100 MB transcript (the
figures in docs/IMPORT.md come from that run).
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import pytest

from turnback import Store
from turnback.importers import import_source

MB = 1 << 20


def write_transcript(path: Path, size: int, sid: str = "5ca1e000-0000-4000-8000-000000000001"
                     ) -> dict[str, int]:
    """A Claude Code transcript of about ``size`` bytes, shaped like the real ones."""
    counts = {"prompts": 0, "toolCalls": 0, "output": 0, "lines": 0}
    base = {"sessionId": sid, "cwd": "/w", "version": "2.1.39", "gitBranch": "main",
            "isSidechain": False, "userType": "external"}
    parent: str | None = None
    written = 0
    n = 0
    with path.open("w") as f:

        def put(obj: dict[str, object]) -> None:
            nonlocal written
            data = json.dumps({**base, **obj}) + "\n"
            f.write(data)
            written += len(data)
            counts["lines"] += 1

        while written < size:
            n += 1
            uid = f"00000000-0000-4000-8000-{n:012d}"
            put({"type": "user", "uuid": uid, "parentUuid": parent,
                 "timestamp": "2026-01-01T00:00:00.000Z",
                 "message": {"role": "user", "content": f"prompt {n}: " + "please " * 40}})
            counts["prompts"] += 1
            put({"type": "file-history-snapshot", "messageId": uid, "isSnapshotUpdate": False,
                 "snapshot": {"messageId": uid, "trackedFileBackups": {},
                              "timestamp": "2026-01-01T00:00:00.000Z"}})
            parent = uid
            for m in range(6):
                mid = f"msg_{n:08d}_{m}"
                out = 50 + m
                for b, block in enumerate((
                    {"type": "thinking", "thinking": "thinking " * 60, "signature": "s" * 200},
                    {"type": "text", "text": "Let me look. " * 20},
                    {"type": "tool_use", "id": f"toolu_{n}_{m}", "name": "Bash",
                     "input": {"command": "grep -rn something ."}},
                )):
                    aid = f"{n:08d}-{m:04d}-4000-8000-{b:012d}"
                    put({"type": "assistant", "uuid": aid, "parentUuid": parent,
                         "timestamp": "2026-01-01T00:00:01.000Z",
                         "message": {"id": mid, "role": "assistant", "model": "claude-x",
                                     "content": [block],
                                     "usage": {"input_tokens": 3, "output_tokens": out + b,
                                               "cache_read_input_tokens": 1000}}})
                    parent = aid
                counts["toolCalls"] += 1
                counts["output"] += out + 2
                rid = f"{n:08d}-{m:04d}-4000-9000-000000000000"
                put({"type": "user", "uuid": rid, "parentUuid": parent,
                     "timestamp": "2026-01-01T00:00:02.000Z",
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"toolu_{n}_{m}",
                          "content": "result line\n" * 150}]}})
                parent = rid
                put({"type": "progress", "uuid": rid.replace("9000", "a000"), "parentUuid": rid,
                     "timestamp": "2026-01-01T00:00:02.000Z",
                     "data": {"type": "hook_progress", "hookEvent": "PostToolUse"}})
    return counts


def measure(tmp_path: Path, size: int) -> tuple[float, int, dict[str, int], int]:
    """(seconds, peak bytes, raw counts, events) of importing a ``size``-byte transcript."""
    folder = tmp_path / f"t{size}"
    (folder / "ws").mkdir(parents=True)
    path = folder / "big.jsonl"
    counts = write_transcript(path, size)
    store = Store.open(folder / "ws")
    tracemalloc.start()
    t0 = time.perf_counter()
    result = import_source(store, "claude-code", path)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.problems == []
    stats = store.stats(result.sessions[0])
    assert stats["prompts"] == counts["prompts"]
    assert stats["toolCalls"] == counts["toolCalls"]
    assert stats["tokens"]["output"] == counts["output"]
    print(f"\n{path.stat().st_size / MB:.1f} MB, {counts['lines']} lines: {elapsed:.1f} s, "
          f"peak {peak / MB:.1f} MB traced, {result.events} events")
    return elapsed, peak, counts, result.events


def test_memory_does_not_grow_with_the_transcript(tmp_path: Path) -> None:
    _, small_peak, _, _ = measure(tmp_path, 8 * MB)
    _, big_peak, _, _ = measure(tmp_path, 24 * MB)
    # three times the input, about the same memory: what is held is a batch, not the file
    assert big_peak < small_peak * 1.5
    assert big_peak < 60 * MB


@pytest.mark.slow
def test_a_100_mb_transcript(tmp_path: Path) -> None:
    _, peak, _, _ = measure(tmp_path, 100 * MB)
    assert peak < 60 * MB
