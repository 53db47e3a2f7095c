"""Walks saved between processes: ``cache/blame/<hash of the path>.json`` in the store.

A fresh ``turnback blame`` would otherwise walk every version of the file again (1,000
versions of a 5,000-line file: seconds). A saved walk holds where it stopped (a position in
the history), a digest of the history up to there (checkpoint ids, who made each step, the
rewinds), the file's blob there, and its lines' origins as runs of step positions. It is
used only when the digest matches the history as it is now, and then continued over the
steps added since. It is a cache (docs/FORMAT.md): anything wrong with it — unreadable,
malformed, naming a blob gc removed, counts that do not add up — is a miss, never an error.
"""

from __future__ import annotations

from typing import Any

import orjson
from blake3 import blake3

from ..errors import TurnbackError
from ..fs.atomic import atomic_write
from ..fs.reading import read_regular
from ..store.facade import Store
from .blame import FileState, Walker, agent_lines, is_binary
from .history import History
from .linediff import split_lines
from .origins import Origin

VERSION = 2  # 1: the digest was over the steps' reprs
MAX_BYTES = 64 * 1024 * 1024


def _file(store: Store, path: str) -> Any:
    return store.root / "cache" / "blame" / (blake3(path.encode()).hexdigest()[:32] + ".json")


def load(store: Store, history: History, path: str) -> Walker | None:
    """The saved walk of ``path``, when it still holds for ``history``; else None."""
    try:
        raw = orjson.loads(read_regular(_file(store, path), limit=MAX_BYTES))
        if not isinstance(raw, dict) or raw.get("v") != VERSION or raw.get("path") != path:
            return None
        pos, blob, runs = raw["position"], raw["blob"], raw["runs"]
        if not isinstance(pos, int) or not 0 <= pos < len(history.checkpoints):
            return None
        if raw.get("digest") != history.digest(pos):
            return None
        walker = Walker(store, path)
        if blob is None:
            walker.state = FileState(pos, None)
            return walker
        if not isinstance(blob, str) or not isinstance(runs, list):
            return None
        data = store.read_blob(blob)
        if is_binary(data):
            walker.state = FileState(pos, blob, [], [], True)
            return walker
        lines = split_lines(data)
        origins: list[Origin] = []
        for run in runs:
            count, step = run
            # counted against the lines before anything is allocated: a run of 10**12
            # lines in a shipped store's cache would otherwise take all memory
            if not (isinstance(count, int) and isinstance(step, int)
                    and 0 < count <= len(lines) - len(origins) and 0 <= step <= pos):
                return None
            origins.extend([history.authors[step]] * count)
        if len(origins) != len(lines):
            return None
        walker.state = FileState(pos, blob, lines, origins, data=data,
                                 agents=agent_lines(origins))
        return walker
    except (OSError, TurnbackError, ValueError, KeyError, TypeError):
        return None


def save(store: Store, history: History, walker: Walker) -> None:
    """Save the walk (best effort: a store that cannot be written to keeps none)."""
    state = walker.state
    if state.position < 0:
        return
    step_of = {id(a): i for i, a in enumerate(history.authors)}
    runs: list[list[int]] = []
    for o in state.origins:
        step = step_of.get(id(o))
        if step is None:
            return  # not one of this history's steps (cannot happen; then nothing is saved)
        if runs and runs[-1][1] == step:
            runs[-1][0] += 1
        else:
            runs.append([1, step])
    body = {"v": VERSION, "path": walker.path, "position": state.position,
            "digest": history.digest(state.position), "blob": state.blob, "runs": runs}
    try:
        atomic_write(_file(store, walker.path), orjson.dumps(body), fsync=False)
    except OSError:
        pass
