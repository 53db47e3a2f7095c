"""A damaged store, fuzzed: whatever byte, line or file of the store is flipped, cut, repeated,
replaced or removed, every operation ends in a TurnbackError or a correct result.

A template store is built once (packs, loose objects, checkpoints, sessions, a rewind in the
op log, caches); each example copies it, damages one file, runs one operation and checks:

- nothing beside the workspace changed;
- the workspace changed only if the operation succeeded, and then it is exactly the checkpoint
  (rewind);
- only TurnbackError subclasses escape;
- memory stays bounded (maxrss growth over the whole run).

The default run is small and derandomized; ``TURNBACK_FUZZ_EXAMPLES=N`` runs N examples.
"""

from __future__ import annotations

import os
import resource
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnback import Store, TurnbackError
from wsutil import Picture, picture, run_cli, write

from .crashkit import tally

EXAMPLES = int(os.environ.get("TURNBACK_FUZZ_EXAMPLES", "40"))
MAXRSS_GROWTH_KB = 512 * 1024  # the whole run may grow the process by at most 512 MiB
OPS = ["show", "changes", "diff", "rewind", "undo", "fsck", "sessions", "checkpoint", "gc"]
ACTIONS = ["flip", "cut", "repeat", "replace", "remove", "line"]


class Template:
    def __init__(self, root: Path) -> None:
        self.root = root
        ws = root / "ws"
        write(ws, "a.txt", "alpha\n")
        write(ws, "src/b.py", "print('b')\n")
        write(ws, "big.bin", bytes(range(256)) * 2400)  # 600 KiB: a loose object
        store = Store.open(ws)
        s = store.start_session(session_id="s1", title="fuzz")
        store.append(s.id, "prompt", {"text": "go"})
        self.first = store.checkpoint(session_id=s.id).id  # small files: a pack
        self.pictures: dict[str, Picture] = {self.first: picture(ws)}
        write(ws, "a.txt", "beta\n")
        write(ws, "src/c.py", "print('c')\n")
        (ws / "src/b.py").unlink()
        self.second = store.checkpoint(session_id=s.id).id
        self.pictures[self.second] = picture(ws)
        store.rewind(self.first)  # an op log, a safety checkpoint
        store.undo()
        store.sessions()  # the summary index
        store.close()
        write(root / "outside", "keep.txt", "outside\n")
        self.files = sorted(str(p.relative_to(ws)) for p in (ws / ".turnback").rglob("*")
                            if p.is_file() and "locks" not in p.parts)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    return Template(tmp_path_factory.mktemp("fuzz-template"))


def damage(path: Path, action: str, at: float, data: bytes) -> None:
    raw = path.read_bytes()
    i = int(at * len(raw)) if raw else 0
    if action == "flip" and raw:
        raw = raw[:i] + bytes([raw[min(i, len(raw) - 1)] ^ 0xFF]) + raw[i + 1:]
    elif action == "cut":
        raw = raw[:i]
    elif action == "repeat":
        raw = raw[:i] + raw[i: i + 64] * 3 + raw[i + 64:]
    elif action == "replace":
        raw = data
    elif action == "line":
        lines = raw.split(b"\n")
        lines[int(at * len(lines)) % len(lines)] = data.replace(b"\n", b" ")
        raw = b"\n".join(lines)
    if action == "remove":
        path.unlink()
    else:
        path.write_bytes(raw)


def run(op: str, ws: Path, t: Template) -> None:
    store = Store.open(ws)
    try:
        if op == "show":
            store.file_content(t.first, "a.txt")
            store.read_file(t.first, "big.bin")
        elif op == "changes":
            store.changes(t.first, t.second)
        elif op == "diff":
            store.diff(t.first)
        elif op == "rewind":
            store.rewind(t.first)
        elif op == "undo":
            store.undo()
        elif op == "fsck":
            store.fsck()
        elif op == "sessions":
            store.sessions()
            store.session("s1")
        elif op == "checkpoint":
            store.checkpoint()
        elif op == "gc":
            store.gc()
    finally:
        store.close()


COUNTS: dict[str, int] = {"examples": 0, "failed": 0}


@settings(derandomize=True, max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.integers(min_value=0), action=st.sampled_from(ACTIONS),
       at=st.floats(min_value=0, max_value=1), data=st.binary(max_size=64),
       op=st.sampled_from(OPS))
def test_damaged_store_never_escapes(template: Template, tmp_path: Path, which: int, action: str,
                                     at: float, data: bytes, op: str) -> None:
    t = template
    case = tmp_path / f"case{COUNTS['examples']}"
    COUNTS["examples"] += 1
    shutil.copytree(t.root, case, symlinks=True)
    ws = case / "ws"
    rel = t.files[which % len(t.files)]
    damage(ws / rel, action, at, data)
    before, outside = picture(ws), picture(case / "outside")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ok = True
    try:
        run(op, ws, t)
    except TurnbackError:
        ok = False
    except Exception as exc:  # the property under test: nothing else escapes
        raise AssertionError(f"{op} after {action} of {rel}: {type(exc).__name__}: {exc}") from exc
    assert picture(case / "outside") == outside
    after = picture(ws)
    if op == "rewind" and ok:
        assert after == t.pictures[t.first], f"rewind after {action} of {rel}"
    elif op != "undo" or not ok:
        assert after == before, f"{op} after {action} of {rel} changed the workspace"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < MAXRSS_GROWTH_KB
    COUNTS["failed"] += not ok
    tally("fuzzed store damage").add_case(f"{op} after {action} of {rel}", not ok)
    shutil.rmtree(case)


@pytest.mark.parametrize("rel", ["objects/pack", "checkpoints.jsonl", "oplog.jsonl"])
def test_cli_on_a_damaged_store_prints_no_traceback(template: Template, tmp_path: Path,
                                                    rel: str) -> None:
    case = tmp_path / "case"
    shutil.copytree(template.root, case, symlinks=True)
    ws = case / "ws"
    for f in template.files:
        if f.startswith(f".turnback/{rel}"):
            damage(ws / f, "flip", 0.5, b"")
    for args in (["fsck"], ["rewind", template.first], ["undo"], ["show", template.first,
                                                                   "a.txt"], ["session", "list"]):
        proc = run_cli(ws, *args, check=None)
        assert "Traceback" not in proc.stderr.decode(), (args, proc.stderr.decode())
        assert proc.returncode in (0, 1, 2), (args, proc.returncode)
